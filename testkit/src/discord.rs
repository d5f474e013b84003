//! Discord's side of a webhook, on loopback: the stand-in the bridge's
//! status card is tested and measured against. It speaks the part of
//! Discord's webhook API the card uses: a post with `?wait=true` answers
//! the message with its `id`, `PATCH …/messages/{id}` edits it (404 once
//! it is deleted), and scripted answers (a 429 with `retry_after` in its
//! JSON and a `Retry-After` header) come before any other. Every request
//! is handed to the caller with the moment it arrived; answers can be held
//! back for a while, as a slow Discord's are.

use std::{
    collections::{HashSet, VecDeque},
    sync::{Arc, Mutex, MutexGuard},
};

use axum::{
    body::Bytes,
    http::{HeaderMap, HeaderValue, Method, StatusCode, Uri},
    response::{IntoResponse, Response},
};
use serde_json::{json, Value};
use tokio::{
    net::TcpListener,
    sync::{mpsc, watch},
    task::JoinHandle,
    time::Instant,
};

use crate::HUNG;

/// The webhook's path (its id and token) at the stand-in.
pub const HOOK_PATH: &str = "/api/webhooks/1234/token";

/// The id of the first message the stand-in makes, less one (a snowflake
/// of Discord's length).
const FIRST_ID: u64 = 1_000_000_000_000_000_000;

/// One request the stand-in got.
#[derive(Debug, Clone)]
pub struct Got {
    pub method: Method,
    pub path: String,
    pub query: String,
    /// The body as JSON (`null` when it is none).
    pub body: Value,
    /// When it arrived.
    pub at: Instant,
}

impl Got {
    /// The card's lines (its embed's description); panics when there is
    /// none.
    pub fn text(&self) -> &str {
        self.body["embeds"][0]["description"]
            .as_str()
            .unwrap_or_else(|| panic!("no card in {}", self.body))
    }

    /// Whether it posts a new message asking for it back (`?wait=true`).
    pub fn is_post(&self) -> bool {
        self.method == Method::POST && self.path == HOOK_PATH && self.query == "wait=true"
    }

    /// The id of the message it edits, if it is an edit.
    pub fn edited(&self) -> Option<&str> {
        if self.method != Method::PATCH {
            return None;
        }
        self.path
            .strip_prefix(HOOK_PATH)?
            .strip_prefix("/messages/")
    }
}

/// The channel's state.
#[derive(Debug, Default)]
struct Channel {
    /// The messages the channel holds.
    messages: HashSet<String>,
    /// The last message id made.
    last_id: u64,
    /// Answers given before any other: (status, JSON body, Retry-After).
    script: VecDeque<(u16, &'static str, &'static str)>,
}

/// Whether answers are held back, and how often they were released: a
/// held request waits for the next release.
#[derive(Debug, Default, Clone, Copy)]
struct Held {
    on: bool,
    releases: u64,
}

/// A running stand-in; it stops on drop.
pub struct Discord {
    /// The webhook's URL: `http://127.0.0.1:PORT/api/webhooks/1234/token`.
    pub url: String,
    got: mpsc::UnboundedReceiver<Got>,
    channel: Arc<Mutex<Channel>>,
    /// Whether answers wait for [`Discord::release`].
    held: Arc<watch::Sender<Held>>,
    task: JoinHandle<()>,
}

impl Drop for Discord {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The stand-in's answer to one request.
fn respond(channel: &Mutex<Channel>, method: &Method, uri: &Uri, body: &Value) -> Response {
    let mut c = lock(channel);
    if let Some((status, text, after)) = c.script.pop_front() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static(after));
        h.insert("content-type", HeaderValue::from_static("application/json"));
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return (status, h, text).into_response();
    }
    let message = |id: &str| {
        let mut m = body.clone();
        m["id"] = json!(id);
        m["channel_id"] = json!("42");
        m.to_string()
    };
    match (method, uri.path().strip_prefix(HOOK_PATH)) {
        (&Method::POST, Some("")) if uri.query() == Some("wait=true") => {
            c.last_id += 1;
            let id = c.last_id.to_string();
            c.messages.insert(id.clone());
            (StatusCode::OK, message(&id)).into_response()
        }
        (&Method::PATCH, Some(rest)) => match rest.strip_prefix("/messages/") {
            Some(id) if c.messages.contains(id) => (StatusCode::OK, message(id)).into_response(),
            _ => (
                StatusCode::NOT_FOUND,
                r#"{"message": "Unknown Message", "code": 10008}"#,
            )
                .into_response(),
        },
        _ => StatusCode::BAD_REQUEST.into_response(),
    }
}

fn lock(channel: &Mutex<Channel>) -> MutexGuard<'_, Channel> {
    channel.lock().unwrap_or_else(|p| p.into_inner())
}

impl Discord {
    /// Listens on a free loopback port.
    pub async fn start() -> std::io::Result<Self> {
        let (tx, got) = mpsc::unbounded_channel();
        let channel = Arc::new(Mutex::new(Channel {
            last_id: FIRST_ID,
            ..Channel::default()
        }));
        let c = channel.clone();
        let held = Arc::new(watch::channel(Held::default()).0);
        let gate = held.clone();
        let app = axum::Router::new().fallback(move |method: Method, uri: Uri, body: Bytes| {
            let (tx, c, mut gate) = (tx.clone(), c.clone(), gate.subscribe());
            async move {
                let at = Instant::now();
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let got = Got {
                    method: method.clone(),
                    path: uri.path().to_owned(),
                    query: uri.query().unwrap_or_default().to_owned(),
                    body: body.clone(),
                    at,
                };
                let Held { on, releases } = *gate.borrow_and_update();
                if on {
                    // Handed over on arrival, answered once released
                    // (even if held again since).
                    let _ = tx.send(got);
                    let _ = gate.wait_for(|h| h.releases > releases).await;
                    return respond(&c, &method, &uri, &body);
                }
                let answer = respond(&c, &method, &uri, &body);
                let _ = tx.send(got);
                answer
            }
        });
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            url: format!("http://{addr}{HOOK_PATH}"),
            got,
            channel,
            held,
            task,
        })
    }

    /// The next request, whenever it comes (`None`: the stand-in stopped).
    pub async fn recv(&mut self) -> Option<Got> {
        self.got.recv().await
    }

    /// The next request, within [`HUNG`]; panics when none comes, or when
    /// it would ping anyone (every post and edit keeps `allowed_mentions`
    /// empty).
    pub async fn next(&mut self) -> Got {
        let got = tokio::time::timeout(HUNG, self.got.recv())
            .await
            .expect("no request reached Discord's stand-in")
            .expect("the stand-in stopped");
        assert_eq!(
            got.body["allowed_mentions"],
            json!({"parse": []}),
            "{got:?}"
        );
        got
    }

    /// A request that came already (not yet taken with [`Self::next`]),
    /// if any.
    pub fn try_next(&mut self) -> Option<Got> {
        self.got.try_recv().ok()
    }

    /// Holds every answer from now on until [`Self::release`], as a slow
    /// Discord would: each request is handed over when it arrives (so
    /// [`Self::last_id`] does not know a held post's message yet).
    pub fn hold(&self) {
        self.held.send_modify(|h| h.on = true);
    }

    /// Answers the held requests, and the later ones at once again.
    pub fn release(&self) {
        self.held.send_modify(|h| {
            h.on = false;
            h.releases += 1;
        });
    }

    /// The id of the message posted last.
    pub fn last_id(&self) -> String {
        lock(&self.channel).last_id.to_string()
    }

    /// Deletes message `id` in the channel; whether it was there.
    pub fn delete(&self, id: &str) -> bool {
        lock(&self.channel).messages.remove(id)
    }

    /// Answers the next request with `status`, the JSON `body` and
    /// `Retry-After: retry_after`, before any other scripted answer not
    /// yet given.
    pub fn answer(&self, status: u16, body: &'static str, retry_after: &'static str) {
        lock(&self.channel)
            .script
            .push_back((status, body, retry_after));
    }
}
