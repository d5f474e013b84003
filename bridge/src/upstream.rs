//! The viewers' shared upstream: one master connection that polls the list
//! every interval, and a `watch` channel every WebSocket reads the latest
//! state from. A slow viewer only ever sees the newest value, never a queue.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use protocol::{
    bridge::MasterState,
    codec::{Frame, FrameCodec},
    message::names,
    Command,
};
use tokio::{
    net::TcpStream,
    sync::watch,
    time::{Instant, MissedTickBehavior},
};
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_util::{codec::Framed, sync::CancellationToken};
use tracing::{debug, info, warn};

use crate::{
    config::{Config, MAX_MASTER_REPLY, MAX_MASTER_REPLY_DIGITS},
    metrics::Metrics,
};

/// The master's list as received, and as viewers get it.
#[derive(Debug, Clone)]
pub struct ListSnapshot {
    /// Increases with every change, so a connection knows what it has sent.
    pub seq: u64,
    /// `msRQueryGameServers` exactly as the master sent it (admins see this).
    pub full: Utf8Bytes,
    /// What viewers see: `full`, or without addresses (`--hide-addresses`).
    pub viewer: Utf8Bytes,
}

/// What every connection watches: the master's reachability and its list.
#[derive(Debug, Clone)]
pub struct Shared {
    /// Whether the shared upstream reaches the master.
    pub master: MasterState,
    /// Why the master is down, for `/healthz`.
    pub reason: Option<Arc<str>>,
    /// `None` until the first answer arrives.
    pub list: Option<ListSnapshot>,
}

/// The shared upstream: the poller's state and the ways to nudge it.
#[derive(Debug)]
pub struct Upstream {
    tx: watch::Sender<Shared>,
    hide_addresses: bool,
    metrics: Arc<Metrics>,
}

impl Upstream {
    /// An upstream that has not polled yet (and counts itself "up" until
    /// its first attempt fails).
    pub fn new(hide_addresses: bool, metrics: Arc<Metrics>) -> Self {
        let (tx, _) = watch::channel(Shared {
            master: MasterState::Up,
            reason: None,
            list: None,
        });
        Self {
            tx,
            hide_addresses,
            metrics,
        }
    }

    /// A receiver for one connection; it starts at the current state.
    pub fn subscribe(&self) -> watch::Receiver<Shared> {
        self.tx.subscribe()
    }

    /// The current state.
    pub fn current(&self) -> Shared {
        self.tx.borrow().clone()
    }

    /// Publishes a list the master just sent (to the poller or to an
    /// admin's own connection). Unchanged bytes wake nobody.
    pub fn offer(&self, reply: &Bytes) {
        let Ok(full) = Utf8Bytes::try_from(reply.clone()) else {
            debug!("master reply is not UTF-8; ignored");
            return;
        };
        if self
            .tx
            .borrow()
            .list
            .as_ref()
            .is_some_and(|l| l.full.as_bytes() == reply.as_ref())
        {
            return;
        }
        let viewer = if self.hide_addresses {
            match Command::parse(reply) {
                Ok(Command::QueryReply(mut list)) => {
                    for s in &mut list.servers {
                        s.address = None;
                        s.port = None;
                    }
                    Utf8Bytes::from(Command::QueryReply(list).to_json())
                }
                _ => {
                    debug!("master reply unreadable; ignored");
                    return;
                }
            }
        } else {
            full.clone()
        };
        self.tx.send_modify(|s| {
            let seq = s.list.as_ref().map_or(1, |l| l.seq + 1);
            s.list = Some(ListSnapshot { seq, full, viewer });
        });
    }

    fn set_up(&self) {
        self.metrics
            .master_up
            .store(1, std::sync::atomic::Ordering::Relaxed);
        self.tx.send_if_modified(|s| {
            let changed = s.master != MasterState::Up;
            s.master = MasterState::Up;
            s.reason = None;
            if changed {
                info!("master is reachable");
            }
            changed
        });
    }

    fn set_down(&self, reason: String) {
        self.metrics
            .master_up
            .store(0, std::sync::atomic::Ordering::Relaxed);
        self.tx.send_if_modified(|s| {
            let changed = s.master != MasterState::Down;
            if changed {
                warn!(%reason, "master is down");
            }
            s.master = MasterState::Down;
            s.reason = Some(reason.into());
            changed
        });
    }

    /// Polls the master until `cancel` fires: connects (with backoff while
    /// it fails) and queries every `poll_interval`. Admin commands refresh
    /// the list through [`Upstream::offer`] from the admin's own connection.
    pub async fn run(self: Arc<Self>, config: Config, cancel: CancellationToken) {
        let mut backoff = config.reconnect_min;
        // A lost connection is retried at once; only a failed retry is "down".
        let mut retry_now = true;
        loop {
            let connected = tokio::select! {
                c = connect(&config.master, config.master_timeout) => c,
                () = cancel.cancelled() => return,
            };
            let mut framed = match connected {
                Ok(framed) => framed,
                Err(reason) => {
                    self.set_down(reason);
                    if !retry_now {
                        tokio::select! {
                            () = tokio::time::sleep(backoff) => {}
                            () = cancel.cancelled() => return,
                        }
                        backoff = (backoff * 2).min(config.reconnect_max);
                    }
                    retry_now = false;
                    continue;
                }
            };
            debug!(master = %config.master, "shared upstream connected");
            let (reason, answered) = tokio::select! {
                r = self.poll(&mut framed, &config) => r,
                () = cancel.cancelled() => return,
            };
            debug!(%reason, "shared upstream lost the master");
            if !answered {
                // A master that accepts but never gives a readable list
                // (garbage, an oversized frame, a close mid-reply) is down,
                // and is retried with backoff, not in a busy loop.
                self.set_down(reason);
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = cancel.cancelled() => return,
                }
                backoff = (backoff * 2).min(config.reconnect_max);
                retry_now = false;
                continue;
            }
            backoff = config.reconnect_min;
            retry_now = true;
            // Only a failed reconnection reports the master down; but a
            // master that answers nothing is down already.
            if reason.starts_with("no answer") {
                self.set_down(reason);
            }
        }
    }

    /// Queries over one connection until it fails; returns why, and
    /// whether the master answered at least one query on it.
    async fn poll(
        &self,
        framed: &mut Framed<TcpStream, FrameCodec>,
        config: &Config,
    ) -> (String, bool) {
        let mut answered = false;
        let reason = self.poll_until_lost(framed, config, &mut answered).await;
        (reason, answered)
    }

    async fn poll_until_lost(
        &self,
        framed: &mut Framed<TcpStream, FrameCodec>,
        config: &Config,
        answered: &mut bool,
    ) -> String {
        let mut tick = tokio::time::interval(config.poll_interval);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            self.metrics
                .master_queries
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let query = Command::Query.to_json();
            match tokio::time::timeout(config.master_timeout, framed.send(query.as_bytes())).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return format!("cannot write to the master: {e}"),
                Err(_) => return "no answer: the master does not read".to_owned(),
            }
            let deadline = Instant::now() + config.master_timeout;
            loop {
                match tokio::time::timeout_at(deadline, framed.next()).await {
                    Err(_) => {
                        return format!(
                            "no answer from the master within {:?}",
                            config.master_timeout
                        )
                    }
                    Ok(None) => return "the master closed the connection".to_owned(),
                    Ok(Some(Err(e))) => return format!("reading from the master failed: {e}"),
                    Ok(Some(Ok(Frame::Discarded(_)))) => continue,
                    Ok(Some(Ok(Frame::Message(json)))) => {
                        if is_query_reply(&json) {
                            *answered = true;
                            self.set_up();
                            self.offer(&json);
                            break;
                        }
                    }
                }
            }
            // Wait for the next tick; notice a closed connection
            // meanwhile instead of at the next query.
            tick.reset();
            loop {
                tokio::select! {
                    _ = tick.tick() => break,
                    frame = framed.next() => match frame {
                        None => return "the master closed the connection".to_owned(),
                        Some(Err(e)) => return format!("reading from the master failed: {e}"),
                        Some(Ok(_)) => continue,
                    },
                }
            }
        }
    }
}

/// Whether a master message is `msRQueryGameServers`: a JSON object whose
/// `command` is that string. Only `command` is read; the rest (the list,
/// megabytes with thousands of servers) is checked to be JSON but never
/// built into a `Value` tree, which cost most of the relay's CPU (profiled
/// with `make bench`: 80 % in allocation and `Value` construction).
///
/// The master's own compact form (`{"command":"msRQueryGameServers",...}`)
/// is recognised by its first bytes: even skipping the list cost most of
/// what was left. The bridge does not vouch for the master's JSON beyond
/// that (browsers parse it anyway); other spellings get the full check.
pub fn is_query_reply(json: &[u8]) -> bool {
    const COMPACT: &[u8] = br#"{"command":"msRQueryGameServers","#;
    if json.starts_with(COMPACT) && json.ends_with(b"}") {
        return true;
    }
    serde_json::from_slice::<ReplyHead>(json).is_ok_and(|h| h.0)
}

/// The outcome of reading only a message's `command` (see [`is_query_reply`]).
struct ReplyHead(bool);

impl<'de> serde::Deserialize<'de> for ReplyHead {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Head;
        impl<'de> serde::de::Visitor<'de> for Head {
            type Value = ReplyHead;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ReplyHead, A::Error> {
                // Like a parsed object: the last `command` counts, and a
                // `command` that is not a string is an error.
                let mut is_reply = false;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "command" {
                        let command = map.next_value::<std::borrow::Cow<'de, str>>()?;
                        is_reply = command == names::QUERY_REPLY;
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(ReplyHead(is_reply))
            }
        }
        d.deserialize_map(Head)
    }
}

/// Opens a framed connection to the master; the error is a sentence.
pub async fn connect(
    master: &str,
    timeout: Duration,
) -> Result<Framed<TcpStream, FrameCodec>, String> {
    match tokio::time::timeout(timeout, TcpStream::connect(master)).await {
        Ok(Ok(stream)) => {
            let _ = stream.set_nodelay(true);
            let codec = FrameCodec::new(MAX_MASTER_REPLY, MAX_MASTER_REPLY_DIGITS);
            Ok(Framed::new(stream, codec))
        }
        Ok(Err(e)) => Err(format!("cannot connect to the master at {master}: {e}")),
        Err(_) => Err(format!(
            "cannot connect to the master at {master}: no answer within {timeout:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::is_query_reply;

    #[test]
    fn recognises_list_replies_by_command_only() {
        assert!(is_query_reply(
            br#"{"command":"msRQueryGameServers","content":{"servers":[{"name":"a"}]}}"#
        ));
        assert!(is_query_reply(
            br#"{"content":{"servers":[]},"command":"msRQueryGameServers"}"#
        ));
        assert!(is_query_reply(br#"{"command":"msRQuery\u0047ameServers"}"#));
        assert!(!is_query_reply(br#"{"command":"msQueryGameServers"}"#));
        assert!(!is_query_reply(br#"{"command":1,"content":{}}"#));
        assert!(!is_query_reply(br#"["msRQueryGameServers"]"#));
        assert!(!is_query_reply(
            br#"{"command":"msRQueryGameServers","content":{"#
        ));
        assert!(!is_query_reply(br#"{"command":"msRQueryGameServers"} x"#));
        assert!(!is_query_reply(
            br#"{ "command":"msRQueryGameServers","command":"other"}"#
        ));
        assert!(is_query_reply(
            br#"{ "command" : "msRQueryGameServers", "content": {"servers": []} }"#
        ));
    }
}
