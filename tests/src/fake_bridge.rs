//! A fake bridge for pages pointed at it with `?bridge=`: a WebSocket
//! server on 127.0.0.1:0 that records every socket (its upgrade request,
//! when it was accepted and opened) and every frame the page sends, says
//! only what the test tells it to (pushes, and optionally answers to
//! `msQueryGameServers`), and stops on drop.
//!
//! It runs on its own runtime, so its timestamps do not wait for the
//! test's task and it answers while the test thread blocks (starting
//! processes).
//!
//! ```no_run
//! # use e2e::fake_bridge::FakeBridge;
//! let fake = FakeBridge::builder().answer_queries(vec![]).start();
//! let page = format!("/?bridge={}", fake.url());
//! ```

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, Instant},
};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::{
    net::{TcpListener, TcpStream},
    runtime::Runtime,
    sync::{broadcast, watch},
};
use tokio_tungstenite::tungstenite::{
    handshake::server::{Request, Response},
    Message,
};

use crate::until;

/// Pushes queued for a socket that has not taken them yet.
const QUEUE: usize = 64;

/// One socket the page opened, as the fake saw it.
#[derive(Debug, Clone)]
pub struct Conn {
    /// When the TCP connection was accepted (before the handshake).
    pub accepted: Instant,
    /// When the WebSocket handshake completed.
    pub opened: Option<Instant>,
    /// The upgrade request's path.
    pub path: String,
    /// The upgrade request verbatim: its URI and headers.
    pub request: String,
}

/// A data frame the page sent (a binary one as lossy UTF-8).
#[derive(Debug, Clone)]
pub struct Frame {
    /// The socket it came on: its index in [`FakeBridge::conns`].
    pub socket: usize,
    pub at: Instant,
    pub text: String,
}

impl Frame {
    /// The frame's `command`, if it is a JSON message.
    pub fn command(&self) -> Option<String> {
        let v: Value = serde_json::from_str(&self.text).ok()?;
        v.get("command")?.as_str().map(str::to_owned)
    }
}

/// How a [`FakeBridge`] behaves; see [`FakeBridge::builder`].
#[derive(Debug, Default)]
pub struct Builder {
    answer: Option<Vec<Value>>,
}

impl Builder {
    /// Answers each `msQueryGameServers` with `servers` (later
    /// [`FakeBridge::set_servers`]), like a bridge whose pushes never
    /// come. Without it, queries go unanswered.
    pub fn answer_queries(mut self, servers: Vec<Value>) -> Builder {
        self.answer = Some(servers);
        self
    }

    /// Binds 127.0.0.1:0 and starts accepting.
    pub fn start(self) -> FakeBridge {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the fake bridge");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("the fake's address");
        let shared = Arc::new(Shared {
            servers: Mutex::new(self.answer),
            accepting: Mutex::new(true),
            ..Shared::default()
        });
        let (send, _) = broadcast::channel(QUEUE);
        let (kick, kicked) = watch::channel(0);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("the fake bridge's runtime");
        runtime.spawn(accept_loop(
            listener,
            Arc::clone(&shared),
            send.clone(),
            kicked,
        ));
        FakeBridge {
            addr,
            shared,
            send,
            kick,
            runtime: Some(runtime),
        }
    }
}

#[derive(Default)]
struct Shared {
    /// What a query is answered with (`None`: it is not).
    servers: Mutex<Option<Vec<Value>>>,
    /// Every socket accepted, in order.
    conns: Mutex<Vec<Conn>>,
    /// Every frame received, in order.
    frames: Mutex<Vec<Frame>>,
    /// While false, connections are accepted and dropped at once (a bridge
    /// that is down, without making the page wait for a timeout).
    accepting: Mutex<bool>,
    /// Connections dropped while not accepting.
    refused: Mutex<u32>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn update(&self, id: usize, f: impl FnOnce(&mut Conn)) {
        if let Some(c) = lock(&self.conns).get_mut(id) {
            f(c);
        }
    }

    /// The answer to a query, if the fake gives one.
    fn reply(&self) -> Option<String> {
        lock(&self.servers)
            .as_ref()
            .map(|servers| list_reply(servers).to_string())
    }
}

pub use lobby_testkit::fake_master::list_reply;

/// The running fake; see the module's documentation.
pub struct FakeBridge {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// What every open socket sends.
    send: broadcast::Sender<String>,
    /// Bumping it closes every open socket (close frame, then drop).
    kick: watch::Sender<u32>,
    runtime: Option<Runtime>,
}

impl FakeBridge {
    /// A fake that records and answers nothing by itself.
    pub fn start() -> FakeBridge {
        Builder::default().start()
    }

    /// A fake to configure before it starts.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The `?bridge=` value that points the page here.
    pub fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// Every socket accepted so far, in order.
    pub fn conns(&self) -> Vec<Conn> {
        lock(&self.shared.conns).clone()
    }

    /// Socket `id` once it has completed its handshake.
    pub fn opened(&self, id: usize) -> Option<Conn> {
        self.conns()
            .into_iter()
            .nth(id)
            .filter(|c| c.opened.is_some())
    }

    /// Every frame the page sent, in order.
    pub fn frames(&self) -> Vec<Frame> {
        lock(&self.shared.frames).clone()
    }

    /// The frames that came on socket `id`.
    pub fn frames_on(&self, id: usize) -> Vec<Frame> {
        self.frames()
            .into_iter()
            .filter(|f| f.socket == id)
            .collect()
    }

    /// The `bridgeSubscribe` contents the page sent, with their socket, in
    /// order.
    pub fn subscribes(&self) -> Vec<(usize, Value)> {
        self.frames()
            .iter()
            .filter_map(|f| {
                let v: Value = serde_json::from_str(&f.text).ok()?;
                (v["command"] == "bridgeSubscribe").then(|| (f.socket, v["content"].clone()))
            })
            .collect()
    }

    /// Waits up to `timeout` for subscribe number `n` (from 0) and returns
    /// it.
    pub async fn wait_subscribe(&self, n: usize) -> (usize, Value) {
        until(&format!("subscribe #{n}"), || async {
            let s = self.subscribes();
            s.get(n).cloned().ok_or_else(|| format!("{s:?}"))
        })
        .await
    }

    /// When each `msQueryGameServers` arrived on socket `id`.
    pub fn queries(&self, id: usize) -> Vec<Instant> {
        self.frames_on(id)
            .into_iter()
            .filter(|f| f.command().as_deref() == Some("msQueryGameServers"))
            .map(|f| f.at)
            .collect()
    }

    /// The frames on socket `id` that are neither a subscribe nor a query.
    pub fn other(&self, id: usize) -> Vec<String> {
        self.frames_on(id)
            .into_iter()
            .filter(|f| {
                !matches!(
                    f.command().as_deref(),
                    Some("bridgeSubscribe" | "msQueryGameServers")
                )
            })
            .map(|f| f.text)
            .collect()
    }

    /// What later queries are answered with.
    pub fn set_servers(&self, servers: Vec<Value>) {
        *lock(&self.shared.servers) = Some(servers);
    }

    /// While `false`, every new connection is dropped at once.
    pub fn set_accepting(&self, on: bool) {
        *lock(&self.shared.accepting) = on;
    }

    /// Connections dropped while not accepting.
    pub fn refused(&self) -> u32 {
        *lock(&self.shared.refused)
    }

    /// Sends `message` to every open socket. Panics when none is open:
    /// pushing to nobody is the test's own mistake.
    pub fn push(&self, message: &Value) {
        self.send
            .send(message.to_string())
            .expect("a socket is open");
    }

    /// Pushes the list queries are answered with to every open socket,
    /// unasked, like a bridge whose pushes work after all.
    pub fn push_list(&self) {
        let servers = lock(&self.shared.servers).clone().unwrap_or_default();
        self.push(&list_reply(&servers));
    }

    /// Closes every open socket, like a bridge going away.
    pub fn close_all(&self) {
        self.kick.send_modify(|n| *n += 1);
    }
}

impl Drop for FakeBridge {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            // Allowed inside the test's async context, unlike a plain drop.
            rt.shutdown_background();
        }
    }
}

async fn accept_loop(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    send: broadcast::Sender<String>,
    kicked: watch::Receiver<u32>,
) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let accepted = Instant::now();
        if !*lock(&shared.accepting) {
            *lock(&shared.refused) += 1;
            drop(stream);
            continue;
        }
        let id = {
            let mut conns = lock(&shared.conns);
            conns.push(Conn {
                accepted,
                opened: None,
                path: String::new(),
                request: String::new(),
            });
            conns.len() - 1
        };
        tokio::spawn(connection(
            stream,
            id,
            Arc::clone(&shared),
            send.subscribe(),
            kicked.clone(),
        ));
    }
}

async fn connection(
    stream: TcpStream,
    id: usize,
    shared: Arc<Shared>,
    mut pushes: broadcast::Receiver<String>,
    mut kicked: watch::Receiver<u32>,
) {
    let (mut path, mut request) = (String::new(), String::new());
    // The callback's `Result` (and its large error) is tungstenite's signature.
    #[allow(clippy::result_large_err)]
    let handshake = tokio_tungstenite::accept_hdr_async(stream, |req: &Request, resp: Response| {
        path = req.uri().path().to_owned();
        request = format!("{} {:?}", req.uri(), req.headers());
        Ok(resp)
    })
    .await;
    let Ok(mut ws) = handshake else { return };
    shared.update(id, |c| {
        c.opened = Some(Instant::now());
        c.path = path;
        c.request = request;
    });
    kicked.borrow_and_update();
    loop {
        tokio::select! {
            frame = ws.next() => {
                let at = Instant::now();
                let text = match frame {
                    Some(Ok(Message::Text(t))) => t.to_string(),
                    Some(Ok(Message::Binary(b))) => String::from_utf8_lossy(&b).into_owned(),
                    Some(Ok(_)) => continue,
                    Some(Err(_)) | None => break,
                };
                let query = serde_json::from_str::<Value>(&text)
                    .is_ok_and(|v| v["command"] == "msQueryGameServers");
                lock(&shared.frames).push(Frame { socket: id, at, text });
                if query {
                    if let Some(reply) = shared.reply() {
                        if ws.send(Message::text(reply)).await.is_err() {
                            break;
                        }
                    }
                }
            }
            text = pushes.recv() => match text {
                Ok(text) => if ws.send(Message::text(text)).await.is_err() { break },
                Err(_) => break,
            },
            _ = kicked.changed() => {
                let _ = ws.close(None).await;
                break;
            }
        }
    }
}
