//! The viewers' shared upstream: where the lobby's list comes from, and the
//! `watch` channel every WebSocket reads the latest state from. A slow
//! viewer only ever sees the newest value, never a queue.
//!
//! Three modes, each a type that owns its task ([`Source`] picks one), feed
//! the same [`Upstream`]: with the master in this process, [`Follower`]
//! publishes each change of its registry as it happens; with `--master`
//! and `--master-feed off`, [`Poller`] asks the remote master every
//! `--poll-interval`, and admins' own connections offer the lists they read
//! ([`Upstream::offer_admin_list`]); with `--master` (and its feed),
//! [`Subscriber`] follows the remote master's change feed and polls only
//! while the feed cannot be followed. Either way [`Upstream`] numbers each
//! list once (the feed of deltas), encodes it once for everyone, and drops
//! unchanged ones.

mod backoff;
mod follower;
mod poller;
mod subscriber;

pub use follower::Follower;
pub use poller::Poller;
pub use subscriber::{take_message, take_message_within, Subscriber};

use std::{
    sync::{
        atomic::{AtomicBool, Ordering::Relaxed},
        Arc, Mutex,
    },
    time::Duration,
};

use bytes::Bytes;
use master::feed::FeedToken;
use protocol::{
    bridge::MasterState,
    codec::FrameCodec,
    delta::{Changeset, Entries, Keyed, Taken, Unfollowed},
    ServerList,
};
use tokio::{net::TcpStream, sync::watch, time::Instant};
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_util::{codec::Framed, sync::CancellationToken};
use tracing::{debug, info, warn};

use crate::{
    config::{Config, MAX_MASTER_REPLY, MAX_MASTER_REPLY_DIGITS},
    error::MasterError,
    live::{
        feed::{new_epoch, Feed, FeedState},
        keys::Keys,
        publish::{Holds, Numbered, Publisher, Text},
    },
    metrics::Metrics,
    visibility::Visibility,
};

/// What every connection watches: the master's reachability and its list.
#[derive(Debug, Clone)]
pub struct Shared {
    /// Whether the shared upstream reaches the master.
    pub master: MasterState,
    /// `msRQueryGameServers` exactly as the master sent it (admins' form)
    /// and as viewers see it; `None` until the first answer arrives.
    pub list: Option<Numbered>,
    /// The same list for delta subscribers and `/api/servers` (`docs/protocol.md` §3);
    /// `None` until the first answer arrives.
    pub feed: Option<Arc<FeedState>>,
}

impl Holds for Shared {
    fn numbered(&self) -> Option<&Numbered> {
        self.list.as_ref()
    }

    fn numbered_mut(&mut self) -> &mut Option<Numbered> {
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
    /// Whether the list is polled now (see [`Upstream::offer_admin_list`]).
    polled: AtomicBool,
}

/// Where the lobby's list comes from: one mode, which owns its task.
#[derive(Debug, Clone)]
pub enum Source {
    /// The master runs in this process: its registry's changes are
    /// published as they happen.
    Embedded(Follower),
    /// A master elsewhere (`config.master`): polled over TCP.
    Remote(Poller),
    /// A master elsewhere whose change feed is followed, polled only
    /// while the feed cannot be (`config.master_feed`).
    Feed(Subscriber),
}

/// Where a remote master's change feed is, and the secret it asks for.
#[derive(Debug, Clone)]
pub struct FeedTarget {
    /// `host:port` of the feed (not the master's public port).
    pub addr: String,
    pub token: Option<FeedToken>,
}

impl Source {
    /// The mode that feeds `upstream`: the registry of the master in this
    /// process (`embedded`), else the remote master's change feed when
    /// `config` names one, else polling.
    pub fn new(
        upstream: &Arc<Upstream>,
        embedded: Option<Arc<master::Registry>>,
        config: &Config,
    ) -> Self {
        let shared = || Arc::new(config.clone());
        match (embedded, &config.master_feed) {
            (Some(registry), _) => Source::Embedded(Follower::new(upstream.clone(), registry)),
            (None, Some(addr)) => {
                let target = FeedTarget {
                    addr: addr.clone(),
                    token: config.master_feed_token.clone(),
                };
                Source::Feed(Subscriber::new(upstream.clone(), shared(), target))
            }
            (None, None) => Source::Remote(Poller::new(upstream.clone(), shared())),
        }
    }

    /// Runs the mode's task until `cancel` fires.
    pub async fn run(self, cancel: CancellationToken) {
        match self {
            Source::Embedded(follower) => follower.run(cancel).await,
            Source::Remote(poller) => poller.run(cancel).await,
            Source::Feed(subscriber) => subscriber.run(cancel).await,
        }
    }
}

impl Upstream {
    /// An upstream that has not polled yet (and counts itself "up" until
    /// its first attempt fails).
    pub fn new(visibility: Visibility, metrics: Arc<Metrics>, keys: Keys) -> Self {
        let initial = Shared {
            master: MasterState::Up,
            list: None,
            feed: None,
        };
        Self {
            out: Publisher::new(initial, visibility),
            metrics,
            publishing: Mutex::new(Publishing {
                feed: Feed::new(new_epoch(), visibility, keys),
                asked: None,
            }),
            polled: AtomicBool::new(false),
        }
    }

    /// Whether the list is polled now: only then does an admin's command
    /// want the bridge's query for the list after it, and only then is the
    /// list an admin's own connection reads published
    /// ([`Upstream::offer_admin_list`]). With the master embedded, or while
    /// the change feed is followed, the command's effect reaches the list
    /// that way, and the answer to the query would be dropped.
    pub fn polled(&self) -> bool {
        self.polled.load(Relaxed)
    }

    /// Set by the mode that keeps the list: a [`Poller`] when made, a
    /// [`Subscriber`] as its feed comes and goes.
    fn set_polled(&self, polled: bool) {
        self.polled.store(polled, Relaxed);
    }

    /// Whether the master's change feed is followed now (`/metrics`); the
    /// list is polled while it is not.
    fn set_feed(&self, up: bool) {
        self.set_polled(!up);
        self.metrics.master_feed_up.store(i64::from(up), Relaxed);
    }

    /// Counts one message from the feed (`/metrics`).
    fn count_feed(&self, taken: &Taken) {
        let counter = match taken {
            Taken::Snapshot(_) => &self.metrics.master_feed_snapshots,
            Taken::Delta(Some(_)) => &self.metrics.master_feed_deltas,
            Taken::Delta(None) => &self.metrics.master_feed_quiet,
        };
        counter.fetch_add(1, Relaxed);
    }

    /// A receiver for one connection; it starts at the current state.
    pub fn subscribe(&self) -> watch::Receiver<Shared> {
        self.out.subscribe()
    }

    /// The current state.
    pub fn current(&self) -> Shared {
        self.out.borrow().clone()
    }

    /// Publishes a list an admin's own master connection read (in answer
    /// to a query written at `asked`) while the list is polled
    /// ([`Upstream::polled`]), so an admin's change reaches viewers before
    /// the next poll. Otherwise it is dropped: the registry's change watch,
    /// or the master's change feed, already publishes every change in order
    /// (an admin's included), and a reply read from a socket could only be
    /// as new as that or older, with no poll to correct it.
    pub fn offer_admin_list(&self, reply: &Bytes, asked: Instant) {
        if self.polled() {
            self.offer(reply, asked);
        }
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
    /// the next poll.
    pub fn offer(&self, reply: &Bytes, asked: Instant) {
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
        // A reply that parses is UTF-8 (JSON outside strings is ASCII and
        // serde_json checks the strings), so one check covers both.
        let (Ok(text), Some(list)) = (
            Utf8Bytes::try_from(reply.clone()),
            ServerList::from_reply(reply),
        ) else {
            debug!("master reply is not a readable list; ignored");
            return;
        };
        let (text, servers) = valid_only(text, list.servers);
        self.publish(text, servers, Some(asked));
    }

    /// Publishes the master's feed's changes, passed on as they are:
    /// nothing else of the list is read, and the list's texts are written
    /// only if somebody reads them (see [`Feed::pass_on`]; [`Unfollowed`]:
    /// nothing published, and the feed's whole list is needed,
    /// [`Upstream::follow`]). Taken at `asked` (now), the list is newer
    /// than any reply to a query written before.
    fn pass_on(&self, changes: Vec<Changeset>, asked: Instant) -> Result<(), Unfollowed> {
        let mut publishing = self.lock();
        if let Some(state) = publishing.feed.pass_on(changes)? {
            self.publish_list(state);
        }
        publishing.asked = Some(asked);
        Ok(())
    }

    /// Publishes the master's feed's whole list (a snapshot), numbered by
    /// the master, taken at `asked`: its changes are passed on after it.
    fn follow(&self, whole: Vec<Keyed>, asked: Instant) {
        let mut publishing = self.lock();
        publishing.asked = Some(asked);
        if let Some(state) = publishing.feed.follow(whole) {
            self.publish_list(state);
        }
    }

    /// Publishes the embedded registry's list as it is now (see
    /// [`Feed::take_registry`]; `seen`: the registry's list taken last);
    /// returns the list taken, to pass next time. The registry's changes
    /// are ordered by its change watch and carry no query time.
    fn take_registry(&self, registry: &master::Registry, seen: Option<&Entries>) -> Entries {
        let mut publishing = self.lock();
        let (seen, state) = publishing.feed.take_registry(registry, seen);
        if let Some(state) = state {
            self.publish_list(state);
        }
        seen
    }

    /// Keys `registry`'s entries as this upstream's list keys them, so
    /// that its list is published as it is ([`Upstream::take_registry`]).
    fn key_registry(&self, registry: &master::Registry) {
        registry.key_with(self.lock().feed.key_fn());
    }

    /// Publishes a list that changed, to delta and plain subscribers alike
    /// (its plain text written on first use). Called under the publishing
    /// lock, so lists reach the watch in the order they were numbered.
    fn publish_list(&self, state: Arc<FeedState>) {
        self.out
            .publish_changed(Text::List(state.clone()), |s| s.feed = Some(state));
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
    ///
    /// The keyed list can change while the text does not: a server that
    /// left and a twin registered by another host that took its place in
    /// one change read the same, but the twin has a key of its own. Then
    /// the keyed list (deltas, `/api/servers`, the history) is published
    /// alone, and the unchanged text wakes no plain subscriber.
    fn publish(
        &self,
        full: Utf8Bytes,
        servers: Vec<protocol::ServerEntry>,
        asked: Option<Instant>,
    ) {
        let text = self.out.encode(full, |viewers| {
            protocol::message::query_reply_text(&servers, viewers)
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
        let mut state = publishing.feed.publish(servers);
        self.out.publish(text, |s| {
            if let Some(state) = state.take() {
                s.feed = Some(state);
            }
        });
        if let Some(state) = state {
            self.out.update(|s| {
                s.feed = Some(state);
                true
            });
        }
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

    /// Counts one query to the remote master (`/metrics`).
    fn count_query(&self) {
        self.metrics
            .master_queries
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A polled reply's entries that keep the master protocol's rules, and the
/// reply's text: as the master wrote it when every entry does, else written
/// again without the others. A reply is an input like the feed's messages;
/// a reader skips what it cannot take rather than losing the list, as
/// [`ServerList`] does with entries it cannot read.
fn valid_only(
    text: Utf8Bytes,
    servers: Vec<protocol::ServerEntry>,
) -> (Utf8Bytes, Vec<protocol::ServerEntry>) {
    let listed = servers.len();
    let valid: Vec<_> = servers
        .into_iter()
        .filter(|e| e.validate().is_ok())
        .collect();
    if valid.len() == listed {
        return (text, valid);
    }
    master::throttled!(
        warn,
        skipped = listed - valid.len(),
        "the master's reply lists entries that break the master protocol's rules; not listed"
    );
    // The reply's own form, with addresses: the admins' form of the list.
    let text = protocol::message::query_reply_text(&valid, Visibility::ADMINS);
    (Utf8Bytes::from(text), valid)
}

/// What is published under one lock: the feed, and how old its list is.
#[derive(Debug)]
struct Publishing {
    feed: Feed,
    /// When the query behind the newest list from a remote master was
    /// written (see [`Upstream::offer`]); `None` before the first.
    asked: Option<Instant>,
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
        list.text.forms().full.as_str().to_owned()
    }

    #[test]
    fn replies_asked_before_the_published_list_are_dropped() {
        let metrics = Arc::new(Metrics::default());
        let upstream = Upstream::new(
            Visibility::new(false),
            metrics.clone(),
            Keys::from_secret(b"test"),
        );
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
    fn a_polled_entry_that_breaks_a_rule_is_not_listed() {
        let upstream = Upstream::new(
            Visibility::new(false),
            Arc::new(Metrics::default()),
            Keys::from_secret(b"test"),
        );
        let long = "n".repeat(1_000_000);
        upstream.offer(&reply(&["Fine", &long]), Instant::now());
        let text = published(&upstream);
        assert!(
            text.contains("\"Fine\""),
            "{}",
            &text[..text.len().min(200)]
        );
        assert!(text.len() < 1_000, "the long name was published");
        let feed = upstream.current().feed.expect("a list");
        assert_eq!(feed.list().len(), 1);
    }

    #[test]
    fn an_embedded_masters_list_is_published_as_the_registry_holds_it() {
        let keys = Keys::from_secret(b"test");
        let upstream = Arc::new(Upstream::new(
            Visibility::new(false),
            Arc::new(Metrics::default()),
            keys.clone(),
        ));
        let registry = Arc::new(master::Registry::new());
        let reg = |name: &str, port| protocol::Registration::new(name, "192.0.2.7", port).unwrap();
        // Registered before the bridge follows: keyed once it does.
        registry.register(1, reg("a", 20001));
        let _follower = Follower::new(upstream.clone(), registry.clone());
        // One list in the process: what is published is the registry's
        // own entries, under its numbers, with the bridge's keys.
        let same = |seen: &Entries| {
            let feed = upstream.current().feed.expect("a list");
            assert_eq!(feed.list().len(), seen.len());
            for held in seen.values() {
                let published = feed.list().get(held.id).expect("listed");
                assert!(Arc::ptr_eq(published, held), "entry {} copied", held.id);
                assert_eq!(held.key, Some(keys.key(&held.entry)));
            }
            feed.list().iter().map(|k| k.id).collect::<Vec<_>>()
        };
        let seen = upstream.take_registry(&registry, None);
        assert_eq!(same(&seen), [1]);
        registry.register(2, reg("b", 20002));
        registry.register(1, reg("a", 20001));
        let mut stats = protocol::Stats::default();
        stats.players.current = 3;
        registry.update_stats(2, stats);
        let seq = upstream.current().feed.expect("a list").seq;
        let seen = upstream.take_registry(&registry, Some(&seen));
        assert_eq!(
            same(&seen),
            [2, 3],
            "a re-registration takes the next number"
        );
        let feed = upstream.current().feed.expect("a list");
        assert_eq!(
            feed.seq,
            seq + 1,
            "one delta for the changes taken together"
        );
        // Nothing changed: nothing published.
        let again = upstream.take_registry(&registry, Some(&seen));
        assert_eq!(upstream.current().feed.expect("a list").seq, seq + 1);
        assert_eq!(same(&again), [2, 3]);
    }

    #[test]
    fn an_embedded_master_is_the_only_source() {
        let upstream = || {
            Arc::new(Upstream::new(
                Visibility::new(false),
                Arc::new(Metrics::default()),
                Keys::from_secret(b"test"),
            ))
        };
        let token = crate::token::AdminToken::new("0123456789abcdef").unwrap();
        let config = Config::new("127.0.0.1:1", token);
        let embedded = upstream();
        let _source = Source::new(&embedded, Some(Arc::new(master::Registry::new())), &config);
        assert!(!embedded.polled(), "no query after an admin's command");
        embedded.offer_admin_list(&reply(&["from a socket"]), Instant::now());
        assert!(embedded.current().list.is_none());

        let remote = upstream();
        let _source = Source::new(&remote, None, &config);
        assert!(remote.polled());
        remote.offer_admin_list(&reply(&["from a socket"]), Instant::now());
        assert!(remote.current().list.is_some());

        // Followed from its feed: admins' lists only while it is not.
        let followed = upstream();
        let feed = Config {
            master_feed: Some("127.0.0.1:2".into()),
            ..config.clone()
        };
        let _source = Source::new(&followed, None, &feed);
        followed.set_feed(true);
        assert!(!followed.polled());
        followed.offer_admin_list(&reply(&["from a socket"]), Instant::now());
        assert!(followed.current().list.is_none());
        followed.set_feed(false);
        followed.offer_admin_list(&reply(&["from a socket"]), Instant::now());
        assert!(followed.current().list.is_some());
    }
}
