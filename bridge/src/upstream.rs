//! The viewers' shared upstream: one master connection that polls the list
//! every interval, and a `watch` channel every WebSocket reads the latest
//! state from. A slow viewer only ever sees the newest value, never a queue.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use protocol::{
    bridge::MasterState,
    codec::{Frame, FrameCodec},
    is_query_reply, Command, ServerList,
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
    error::MasterError,
    feed::{new_epoch, Feed, FeedState},
    metrics::Metrics,
    publish::{Holds, Publisher, Snapshot},
};

/// How long the embedded master's changes are gathered into one publish:
/// short next to the fan-out target, long enough that a burst of
/// registrations (a master restart) is one delta rather than thousands.
const COALESCE: Duration = Duration::from_millis(20);

/// What every connection watches: the master's reachability and its list.
#[derive(Debug, Clone)]
pub struct Shared {
    /// Whether the shared upstream reaches the master.
    pub master: MasterState,
    /// `msRQueryGameServers` exactly as the master sent it (admins' form)
    /// and as viewers see it; `None` until the first answer arrives.
    pub list: Option<Snapshot>,
    /// The same list for delta subscribers and `/api/servers` (§2.1);
    /// `None` until the first answer arrives.
    pub feed: Option<Arc<FeedState>>,
}

impl Holds for Shared {
    fn snapshot(&self) -> Option<&Snapshot> {
        self.list.as_ref()
    }

    fn snapshot_mut(&mut self) -> &mut Option<Snapshot> {
        &mut self.list
    }
}

/// The shared upstream: the poller's state and the ways to nudge it.
#[derive(Debug)]
pub struct Upstream {
    out: Publisher<Shared>,
    metrics: Arc<Metrics>,
    /// Numbers the list and keeps its recent deltas, and knows how old the
    /// published list is; also serialises publishing, so lists reach the
    /// watch in the order they were taken.
    publishing: Mutex<Publishing>,
    /// The master running in this process: its changes are pushed, not polled.
    embedded: Option<Arc<master::Registry>>,
}

impl Upstream {
    /// An upstream that has not polled yet (and counts itself "up" until
    /// its first attempt fails).
    pub fn new(hide_addresses: bool, metrics: Arc<Metrics>) -> Self {
        let initial = Shared {
            master: MasterState::Up,
            list: None,
            feed: None,
        };
        Self {
            out: Publisher::new(initial, hide_addresses),
            metrics,
            publishing: Mutex::new(Publishing {
                feed: Feed::new(new_epoch(), hide_addresses),
                asked: None,
            }),
            embedded: None,
        }
    }

    /// Takes lists from the master running in this process instead of
    /// polling it: every change is published as it happens.
    pub fn with_embedded(mut self, registry: Arc<master::Registry>) -> Self {
        self.embedded = Some(registry);
        self
    }

    /// A receiver for one connection; it starts at the current state.
    pub fn subscribe(&self) -> watch::Receiver<Shared> {
        self.out.subscribe()
    }

    /// The current state.
    pub fn current(&self) -> Shared {
        self.out.borrow().clone()
    }

    /// Publishes a list the master just sent (to the poller or to an
    /// admin's own connection) in answer to a query written at `asked`.
    /// Unchanged bytes wake nobody.
    ///
    /// The poller's and the admins' replies race each other, so a reply
    /// whose query was written before the query of the list already
    /// published is older than that list and is dropped (counted in
    /// `bridge_stale_lists_dropped_total`): viewers never go back from a
    /// newer list to an older one. One connection's replies come in order
    /// and the master answers queries in the order it reads them, so
    /// "written earlier" means "answered earlier" except for the transit
    /// time between two connections: a query written a moment earlier on
    /// one connection may still reach the master after another's. Then a
    /// newer list is dropped, or an older one published, and it stays until
    /// the next poll, as it did before this check.
    ///
    /// With the master embedded, offers are ignored: its registry's change
    /// watch already publishes every change in order (an admin's included,
    /// within [`COALESCE`]), and a reply read from a socket could only be
    /// as new as that or older, with no poll to correct it.
    pub fn offer(&self, reply: &Bytes, asked: Instant) {
        if self.embedded.is_some() {
            return;
        }
        {
            let mut publishing = self.lock();
            if self.stale(&publishing, asked) {
                return;
            }
            if self.out.is_current(reply) {
                // Still the newest: an older reply must not replace it.
                publishing.asked = Some(asked);
                return;
            }
        }
        let Some(list) = ServerList::from_reply(reply) else {
            debug!("master reply unreadable; ignored");
            return;
        };
        let servers = list.servers;
        self.publish(reply, servers, Some(asked));
    }

    /// Publishes the embedded master's list (`reply` unframed): the
    /// registry's state after its latest change, ordered by its change
    /// watch; it carries no query time and leaves the admins' replies
    /// ordered among themselves.
    fn offer_listing(&self, reply: &Bytes, servers: Vec<protocol::ServerEntry>) {
        if !self.out.is_current(reply) {
            self.publish(reply, servers, None);
        }
    }

    /// Whether a reply to a query written at `asked` is older than the
    /// published list (then it is counted as dropped).
    fn stale(&self, publishing: &Publishing, asked: Instant) -> bool {
        let stale = publishing.asked.is_some_and(|newest| asked < newest);
        if stale {
            self.metrics
                .stale_lists_dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            debug!("master reply older than the published list; dropped");
        }
        stale
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Publishing> {
        self.publishing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Publishes `servers`, unless `asked` (when the query behind them was
    /// written) is older than the query of a list published meanwhile.
    fn publish(&self, reply: &Bytes, servers: Vec<protocol::ServerEntry>, asked: Option<Instant>) {
        let Ok(full) = Utf8Bytes::try_from(reply.clone()) else {
            debug!("master reply is not UTF-8; ignored");
            return;
        };
        let text = self.out.encode(full, || {
            let hidden = servers.iter().map(|s| protocol::ServerEntry {
                address: None,
                port: None,
                ..s.clone()
            });
            let json = protocol::message::query_reply_json(hidden.collect::<Vec<_>>().iter());
            // serde_json writes UTF-8 only.
            String::from_utf8(json).unwrap_or_default()
        });
        // Held while the watch is updated: lists are published in the order
        // the feed numbered them.
        let mut publishing = self.lock();
        if let Some(asked) = asked {
            // Checked again: a newer reply may have been published while
            // this one was read.
            if self.stale(&publishing, asked) {
                return;
            }
            publishing.asked = Some(asked);
        }
        let state = publishing.feed.publish(servers);
        self.out.publish(text, |s| {
            if let Some(state) = state {
                s.feed = Some(state);
            }
        });
    }

    fn set_up(&self) {
        self.metrics
            .master_up
            .store(1, std::sync::atomic::Ordering::Relaxed);
        self.out.update(|s| {
            let changed = s.master != MasterState::Up;
            s.master = MasterState::Up;
            if changed {
                info!("master is reachable");
            }
            changed
        });
    }

    fn set_down(&self, reason: &MasterError) {
        self.metrics
            .master_up
            .store(0, std::sync::atomic::Ordering::Relaxed);
        self.out.update(|s| {
            let changed = s.master != MasterState::Down;
            // Only here: `/healthz` says "down" and nothing more. Each
            // change is logged (a line held back would leave the log saying
            // the opposite of the truth); the reconnect backoff bounds how
            // often the state can change.
            if changed {
                warn!(%reason, "master is down");
            }
            s.master = MasterState::Down;
            changed
        });
    }

    /// Polls the master until `cancel` fires: connects (with backoff while
    /// it fails) and queries every `poll_interval`. Admin commands refresh
    /// the list through [`Upstream::offer`] from the admin's own connection.
    pub async fn run(self: Arc<Self>, config: Config, cancel: CancellationToken) {
        if let Some(registry) = self.embedded.clone() {
            return self.follow(registry, cancel).await;
        }
        let mut backoff = config.reconnect_min;
        // A lost connection is retried at once; only a failed retry is "down".
        let mut retry_now = true;
        loop {
            let connected = tokio::select! {
                c = connect(&config.master, config.master_timeout) => c,
                () = cancel.cancelled() => return,
            };
            let failed = match connected {
                Err(reason) => Some(reason),
                Ok(mut framed) => {
                    debug!(master = %config.master, "shared upstream connected");
                    let (reason, answered) = tokio::select! {
                        r = self.poll(&mut framed, &config) => r,
                        () = cancel.cancelled() => return,
                    };
                    debug!(%reason, "shared upstream lost the master");
                    if answered {
                        backoff = config.reconnect_min;
                        retry_now = true;
                        // Only a failed reconnection reports the master
                        // down; but a master that answers nothing is down
                        // already.
                        if reason.is_silence() {
                            self.set_down(&reason);
                        }
                        None
                    } else {
                        // A master that accepts but never gives a readable
                        // list (garbage, an oversized frame, a close
                        // mid-reply) is down, and is retried with backoff,
                        // not in a busy loop.
                        retry_now = false;
                        Some(reason)
                    }
                }
            };
            if let Some(reason) = failed {
                self.set_down(&reason);
                if !retry_now {
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        () = cancel.cancelled() => return,
                    }
                    backoff = (backoff * 2).min(config.reconnect_max);
                }
                retry_now = false;
            }
        }
    }

    /// Publishes the embedded master's list at once after each change
    /// (changes within [`COALESCE`] of each other go out together).
    async fn follow(&self, registry: Arc<master::Registry>, cancel: CancellationToken) {
        let mut changes = registry.changes();
        self.set_up();
        loop {
            changes.borrow_and_update();
            let listing = registry.listing();
            self.offer_listing(&unframe(&listing.reply), listing.servers);
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                () = cancel.cancelled() => return,
            }
            tokio::select! {
                () = tokio::time::sleep(COALESCE) => {}
                () = cancel.cancelled() => return,
            }
        }
    }

    /// Queries over one connection until it fails; returns why, and
    /// whether the master answered at least one query on it.
    async fn poll(
        &self,
        framed: &mut Framed<TcpStream, FrameCodec>,
        config: &Config,
    ) -> (MasterError, bool) {
        let mut answered = false;
        let reason = self.poll_until_lost(framed, config, &mut answered).await;
        (reason, answered)
    }

    async fn poll_until_lost(
        &self,
        framed: &mut Framed<TcpStream, FrameCodec>,
        config: &Config,
        answered: &mut bool,
    ) -> MasterError {
        let mut tick = tokio::time::interval(config.poll_interval);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            self.metrics
                .master_queries
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let query = Command::Query.to_json();
            // Taken just before the write: see `offer` for the ordering.
            let asked = Instant::now();
            match tokio::time::timeout(config.master_timeout, framed.send(query.as_bytes())).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return MasterError::Write(e),
                Err(_) => return MasterError::NotReading,
            }
            let deadline = Instant::now() + config.master_timeout;
            loop {
                match tokio::time::timeout_at(deadline, framed.next()).await {
                    Err(_) => return MasterError::NoAnswer(config.master_timeout),
                    Ok(None) => return MasterError::Closed,
                    Ok(Some(Err(e))) => return MasterError::Read(e),
                    Ok(Some(Ok(Frame::Discarded(_)))) => continue,
                    Ok(Some(Ok(Frame::Message(json)))) => {
                        if is_query_reply(&json) {
                            *answered = true;
                            self.set_up();
                            self.offer(&json, asked);
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
                        None => return MasterError::Closed,
                        Some(Err(e)) => return MasterError::Read(e),
                        Some(Ok(_)) => continue,
                    },
                }
            }
        }
    }
}

/// What is published under one lock: the feed, and how old its list is.
#[derive(Debug)]
struct Publishing {
    feed: Feed,
    /// When the query behind the newest list from a remote master was
    /// written (see [`Upstream::offer`]); `None` before the first.
    asked: Option<Instant>,
}

/// The JSON of one framed master message (`[digits][JSON][newline]`), as
/// the registry caches it; shares the buffer.
fn unframe(framed: &Bytes) -> Bytes {
    let start = framed
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(framed.len());
    let end = framed.len().saturating_sub(1).max(start);
    framed.slice(start..end)
}

/// Opens a framed connection to the master.
pub async fn connect(
    master: &str,
    timeout: Duration,
) -> Result<Framed<TcpStream, FrameCodec>, MasterError> {
    match tokio::time::timeout(timeout, TcpStream::connect(master)).await {
        Ok(Ok(stream)) => {
            let _ = stream.set_nodelay(true);
            let codec = FrameCodec::new(MAX_MASTER_REPLY, MAX_MASTER_REPLY_DIGITS);
            Ok(Framed::new(stream, codec))
        }
        Ok(Err(source)) => Err(MasterError::Connect {
            master: master.to_owned(),
            source,
        }),
        Err(_) => Err(MasterError::ConnectTimeout {
            master: master.to_owned(),
            timeout,
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::{sync::atomic::Ordering::Relaxed, time::Duration};

    use super::*;

    fn reply(names: &[&str]) -> Bytes {
        let servers: Vec<String> = names
            .iter()
            .map(|n| format!(r#"{{"name":"{n}","players":{{"current":1,"max":4}},"isLobbyOpen":true,"gameplayMode":1}}"#))
            .collect();
        let json = format!(
            r#"{{"command":"msRQueryGameServers","content":{{"servers":[{}]}}}}"#,
            servers.join(",")
        );
        Bytes::from(json)
    }

    fn published(upstream: &Upstream) -> String {
        let list = upstream.current().list.expect("a list was published");
        list.text.full.as_str().to_owned()
    }

    #[test]
    fn replies_asked_before_the_published_list_are_dropped() {
        let metrics = Arc::new(Metrics::default());
        let upstream = Upstream::new(false, metrics.clone());
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let (old, new, newer) = (reply(&[]), reply(&["a"]), reply(&["a", "b"]));

        upstream.offer(&new, at(20));
        upstream.offer(&old, at(10));
        assert_eq!(published(&upstream), std::str::from_utf8(&new).unwrap());
        assert_eq!(metrics.stale_lists_dropped.load(Relaxed), 1);

        // The same text asked later is the newest now: a reply asked in
        // between is older than it.
        upstream.offer(&new, at(40));
        upstream.offer(&newer, at(30));
        assert_eq!(published(&upstream), std::str::from_utf8(&new).unwrap());
        assert_eq!(metrics.stale_lists_dropped.load(Relaxed), 2);

        // Asked at the same time or later: published.
        upstream.offer(&newer, at(40));
        assert_eq!(published(&upstream), std::str::from_utf8(&newer).unwrap());
        upstream.offer(&old, at(50));
        assert_eq!(published(&upstream), std::str::from_utf8(&old).unwrap());
        assert_eq!(metrics.stale_lists_dropped.load(Relaxed), 2);
    }

    #[test]
    fn an_embedded_master_is_the_only_source() {
        let registry = Arc::new(master::Registry::new());
        let upstream = Upstream::new(false, Arc::new(Metrics::default())).with_embedded(registry);
        upstream.offer(&reply(&["from a socket"]), Instant::now());
        assert!(upstream.current().list.is_none());
    }

    #[test]
    fn unframe_strips_length_and_newline() {
        let framed = bytes::Bytes::from_static(b"17{\"Hallo\":\"Welt\"}\n");
        assert_eq!(&unframe(&framed)[..], br#"{"Hallo":"Welt"}"#);
        assert!(unframe(&bytes::Bytes::new()).is_empty());
    }
}
