//! WebSocket viewers of a bridge that record every message they receive
//! (with when), so a fault drill can assert what a viewer saw while the
//! master was down, hung or misbehaving, and when it heard of it.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;

use crate::HUNG;
use crate::{timed, until};

/// What a recording viewer received, with when.
#[derive(Debug, Clone)]
pub enum Seen {
    /// `bridgeStatus`: `"up"` or `"down"`.
    Status(String),
    /// `msRQueryGameServers`: the names, in order.
    List(Vec<String>),
    /// `bridgeError`: its code.
    Error(String),
    /// The socket closed (by the bridge or the network).
    Closed,
}

type Log = Arc<Mutex<Vec<(Instant, Seen)>>>;

/// A subscribed viewer whose messages are recorded by a background task.
pub struct Watcher {
    log: Log,
    out: tokio::sync::mpsc::UnboundedSender<String>,
    task: JoinHandle<()>,
}

impl Watcher {
    /// Connects to the bridge's `/ws` and sends `bridgeSubscribe`.
    pub async fn start(bridge: SocketAddr) -> Watcher {
        let url = format!("ws://{bridge}/ws");
        let (ws, _) = tokio::time::timeout(HUNG, tokio_tungstenite::connect_async(url.as_str()))
            .await
            .unwrap_or_else(|_| panic!("no WebSocket handshake with {url} within {HUNG:?}"))
            .unwrap_or_else(|e| panic!("WebSocket to {url}: {e}"));
        let (mut write, mut read) = ws.split();
        let (out, mut out_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let log: Log = Arc::default();
        let record = log.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    text = out_rx.recv() => match text {
                        Some(t) => {
                            if write.send(Message::text(t)).await.is_err() {
                                break;
                            }
                        }
                        None => break,
                    },
                    msg = read.next() => {
                        let seen = match msg {
                            Some(Ok(Message::Text(t))) => classify(t.as_str()),
                            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => Some(Seen::Closed),
                            Some(Ok(_)) => None,
                        };
                        let closed = matches!(seen, Some(Seen::Closed));
                        if let Some(seen) = seen {
                            record.lock().expect("log").push((Instant::now(), seen));
                        }
                        if closed {
                            break;
                        }
                    }
                }
            }
        });
        let w = Watcher { log, out, task };
        w.send(r#"{"command":"bridgeSubscribe"}"#);
        w
    }

    pub fn send(&self, text: &str) {
        let _ = self.out.send(text.to_owned());
    }

    /// Runs `f` on everything received so far (without copying it).
    pub fn with<R>(&self, f: impl FnOnce(&[(Instant, Seen)]) -> R) -> R {
        f(&self.log.lock().expect("log"))
    }

    /// The last list received, if any.
    pub fn last_list(&self) -> Option<Vec<String>> {
        self.with(|log| {
            log.iter().rev().find_map(|(_, s)| match s {
                Seen::List(l) => Some(l.clone()),
                _ => None,
            })
        })
    }

    /// The last `bridgeStatus` received (`None`: none yet).
    pub fn last_status(&self) -> Option<String> {
        self.with(|log| {
            log.iter().rev().find_map(|(_, s)| match s {
                Seen::Status(st) => Some(st.clone()),
                _ => None,
            })
        })
    }

    pub fn closed(&self) -> bool {
        self.with(|log| log.iter().any(|(_, s)| matches!(s, Seen::Closed)))
    }

    /// Whether anything received at or after `t` matches `pred`.
    pub fn any_since(&self, t: Instant, pred: impl Fn(&Seen) -> bool) -> bool {
        self.count_since(t, pred) > 0
    }

    /// How many messages received at or after `t` match `pred`.
    pub fn count_since(&self, t: Instant, pred: impl Fn(&Seen) -> bool) -> usize {
        self.with(|log| {
            log.iter()
                .rev()
                .take_while(|(at, _)| *at >= t)
                .filter(|(_, s)| pred(s))
                .count()
        })
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn classify(text: &str) -> Option<Seen> {
    let v: Value = serde_json::from_str(text).ok()?;
    match v["command"].as_str()? {
        "bridgeStatus" => Some(Seen::Status(v["content"]["master"].as_str()?.to_owned())),
        "msRQueryGameServers" => Some(Seen::List(
            v["content"]["servers"]
                .as_array()?
                .iter()
                .filter_map(|s| s["name"].as_str().map(str::to_owned))
                .collect(),
        )),
        "bridgeError" => Some(Seen::Error(v["content"]["code"].as_str()?.to_owned())),
        _ => None,
    }
}

/// `n` recording viewers, each with its first list.
pub async fn watchers(bridge: SocketAddr, n: usize) -> Vec<Watcher> {
    let all = watchers_any(bridge, n).await;
    wait_all_have_a_list(&all).await;
    all
}

/// `n` recording viewers, without waiting for lists (the master may be down).
pub async fn watchers_any(bridge: SocketAddr, n: usize) -> Vec<Watcher> {
    let mut all = Vec::with_capacity(n);
    for _ in 0..n {
        all.push(Watcher::start(bridge).await);
    }
    all
}

/// Waits until every watcher has received a list; returns how long that
/// took.
pub async fn wait_all_have_a_list(all: &[Watcher]) -> Duration {
    timed(until("every viewer's first list", || async {
        let waiting = all.iter().filter(|w| w.last_list().is_none()).count();
        if waiting == 0 {
            Ok(())
        } else {
            Err(format!("{waiting} without a list"))
        }
    }))
    .await
}

/// Waits until every watcher's last list holds every name in `names`;
/// returns how long that took.
pub async fn wait_all_list(all: &[Watcher], names: &[&str]) -> Duration {
    let what = format!("every viewer to list {names:?}");
    timed(until(&what, || async {
        for w in all {
            let list = w.last_list().unwrap_or_default();
            if let Some(missing) = names.iter().find(|n| !list.iter().any(|l| l == *n)) {
                return Err(format!("a viewer lacks {missing:?}; it has {list:?}"));
            }
        }
        Ok(())
    }))
    .await
}

/// Waits until every watcher's last `bridgeStatus` is `state`.
pub async fn wait_all_status(all: &[Watcher], state: &str) -> Duration {
    let what = format!("every viewer to be told the master is {state}");
    timed(until(&what, || async {
        let other = all
            .iter()
            .filter(|w| w.last_status().as_deref() != Some(state))
            .count();
        if other == 0 {
            Ok(())
        } else {
            Err(format!("{other} viewers not told"))
        }
    }))
    .await
}

/// Panics when any of `all` was disconnected, saying `when`.
pub fn assert_none_closed(all: &[Watcher], when: &str) {
    let closed = all.iter().filter(|w| w.closed()).count();
    assert_eq!(closed, 0, "{closed} viewers were disconnected {when}");
}
