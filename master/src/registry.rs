//! The list of registered game servers: one per connection, kept in
//! registration order, with the serialized query reply cached until the list
//! changes (queries are the hot path; changes are rare by comparison).
//! Programs that embed the master (the bridge) watch [`Registry::changes`]
//! instead of polling the list. The list is persistent ([`Entries`], each
//! entry numbered with its sequence number): a follower keeps the copy it
//! last took (O(1)) and reads what changed since by comparing it with the
//! list now ([`Registry::catch_up`]), which visits only what changed; the
//! master's feed publishes the registry's list itself.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex, MutexGuard,
    },
    time::Duration,
};

use bytes::Bytes;
use protocol::{
    delta::{
        changes_between, Changeset, Encoder, Entries, Keyed, ListPublisher, PublishedList,
        Unfollowed,
    },
    frame::encode_frame,
    message::query_reply_json,
    Registration, ServerEntry, ServerKey, Stats,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Identifies one TCP connection to the master.
pub type ConnId = u64;

/// Shared state of all connections. Cheap to query: the framed reply is built
/// once per change and then handed out as a reference-counted buffer.
#[derive(Debug)]
pub struct Registry {
    inner: Mutex<Inner>,
    next_conn: AtomicU64,
    queries: AtomicU64,
    /// The list's version, bumped on every change: an embedding program
    /// learns of changes at once instead of polling.
    changes: watch::Sender<u64>,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            // Sequence numbers start at 1, as a followed list's ids do
            // (`protocol::delta::KeyedList`): the feed, the bridge and the
            // page then use the registry's numbers as their ids.
            inner: Mutex::new(Inner {
                next_seq: 1,
                ..Inner::default()
            }),
            next_conn: AtomicU64::default(),
            queries: AtomicU64::default(),
            changes: watch::Sender::new(0),
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// Bumped on every change of the list (see [`Registry::changes`]).
    version: u64,
    /// The next registration's sequence number.
    next_seq: u64,
    /// Registration order: sequence number → entry, numbered with it and
    /// keyed by [`Inner::keying`] (no key without one).
    servers: Entries,
    /// How an embedding program keys the entries ([`Registry::key_with`]).
    keying: Option<Keying>,
    /// Which sequence number each connection's server has.
    by_conn: HashMap<ConnId, u64>,
    /// The current list's `msRQueryGameServers`, framed.
    cached_reply: Option<Bytes>,
}

/// How an embedding program keys the registry's entries (a bridge's server
/// keys, which depend only on the registration): given once, before the
/// program publishes the registry's list as its own.
pub type KeyFn = dyn Fn(&ServerEntry) -> Option<ServerKey> + Send + Sync;

/// A [`KeyFn`] held by the registry.
#[derive(Clone)]
struct Keying(Arc<KeyFn>);

impl std::fmt::Debug for Keying {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keying")
    }
}

/// How long a follower of the registry gathers its changes into one
/// (the master's feed into one delta, the embedded master's bridge into one
/// publish): short next to the fan-out target, long enough that a burst of
/// registrations (a master restart) is one change rather than thousands.
pub const COALESCE: Duration = Duration::from_millis(20);

/// Waits for the registry's next change on `changes` (from
/// [`Registry::changes`]) and [`COALESCE`] after it, so that the changes
/// within it are taken together; `false` once the registry is gone or
/// `cancel` fired.
pub async fn next_changes(changes: &mut watch::Receiver<u64>, cancel: &CancellationToken) -> bool {
    tokio::select! {
        changed = changes.changed() => if changed.is_err() { return false },
        () = cancel.cancelled() => return false,
    }
    tokio::select! {
        () = tokio::time::sleep(COALESCE) => true,
        () = cancel.cancelled() => false,
    }
}

/// A list that follows the registry's numbering (the master's feed, the
/// bridge of an embedded master), brought up to date by
/// [`Registry::catch_up`].
pub trait RegistryFollower {
    /// Takes what changed in the registry since the list it last took
    /// (`change`, in the registry's sequence numbers; possibly nothing),
    /// and `now`, the list it leads to (shared, not copied);
    /// [`Unfollowed`] when the change does not fit the follower's list
    /// (left as it was), and the whole list is needed.
    fn pass_on(&mut self, change: Changeset, now: &Entries) -> Result<(), Unfollowed>;

    /// Takes the registry's whole list, `now` (the first time, or after
    /// [`RegistryFollower::pass_on`] refused).
    fn follow(&mut self, now: &Entries);
}

/// The registry's follower that publishes the registry's own list as it
/// is (its entries, numbered and, for an embedding program, keyed:
/// nothing copied or numbered again): the master's feed, and the bridge
/// of an embedded master. It never refuses a change; it keeps the list it
/// published, none when nothing changed.
pub struct Publishing<'a, E: Encoder> {
    publisher: &'a mut ListPublisher<E>,
    published: Option<Arc<PublishedList<E>>>,
}

impl<'a, E: Encoder + Clone> Publishing<'a, E> {
    /// Publishes with `publisher`, whose lists are the registry's.
    pub fn new(publisher: &'a mut ListPublisher<E>) -> Self {
        Self {
            publisher,
            published: None,
        }
    }

    /// The list published by the last catch-up, if anything changed.
    pub fn published(self) -> Option<Arc<PublishedList<E>>> {
        self.published
    }
}

impl<E: Encoder + Clone> RegistryFollower for Publishing<'_, E> {
    fn pass_on(&mut self, change: Changeset, now: &Entries) -> Result<(), Unfollowed> {
        let change = (!change.is_empty()).then_some(change);
        self.published = self.publisher.publish(now.clone(), change);
        Ok(())
    }

    /// Compared with what the publisher last published (nothing, the
    /// first time): a pass-on is never refused, so this is the first list.
    fn follow(&mut self, now: &Entries) {
        let change = changes_between(self.publisher.entries(), now);
        let change = (!change.is_empty()).then_some(change);
        self.published = self.publisher.publish(now.clone(), change);
    }
}

impl Registry {
    /// Brings `follower` from `seen` (the registry's list it last took;
    /// `None` the first time) to the registry's list now: what changed
    /// since, or the whole list the first time or when the follower cannot
    /// take the change. Returns the list reached, to pass next time (an
    /// O(1) copy that shares what does not change next). The one way the
    /// registry is followed, by the master's feed and by an embedded
    /// master's bridge alike; what changed is found by comparing the two
    /// lists, which visits only the parts they do not share.
    pub fn catch_up(
        &self,
        seen: Option<&Entries>,
        follower: &mut impl RegistryFollower,
    ) -> Entries {
        let now = self.list();
        if let Some(seen) = seen {
            if follower.pass_on(changes_between(seen, &now), &now).is_ok() {
                return now;
            }
        }
        follower.follow(&now);
        now
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// A fresh id for a new connection.
    pub fn next_conn_id(&self) -> ConnId {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the maps inconsistent in
        // a way that matters more than stopping the whole master would.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `conn`'s server, replacing (and moving to the end) any
    /// earlier one of the same connection; stats start at the defaults.
    /// The server registered its own address (see [`Registry::register_by`]).
    pub fn register(&self, conn: ConnId, reg: Registration) {
        self.register_by(conn, reg, None);
    }

    /// [`Registry::register`] for a registration whose address is not its
    /// connection's own: `registrant` is that connection's network
    /// ([`crate::limits::address_key`]), kept with the entry
    /// ([`ServerEntry::registrant`]) so that bridges key it apart from
    /// the server it names. `None`: the server's own address.
    pub fn register_by(&self, conn: ConnId, reg: Registration, registrant: Option<IpAddr>) {
        let mut inner = self.lock();
        if let Some(old) = inner.by_conn.remove(&conn) {
            inner.servers.remove(&old);
        }
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let entry = ServerEntry {
            registrant,
            name: reg.name.as_str().to_owned(),
            address: Some(reg.address.as_str().to_owned()),
            port: Some(reg.port.get()),
            stats: Stats::default(),
        };
        let keyed = Keyed {
            id: seq,
            key: inner.keying.as_ref().and_then(|k| (k.0)(&entry)),
            entry,
        };
        inner.servers.insert(seq, Arc::new(keyed));
        inner.by_conn.insert(conn, seq);
        self.changed(inner);
    }

    /// Keys every entry with `key` from now on, those registered already
    /// included: an embedding program (the bridge) then publishes the
    /// registry's list as its own, keys and all. A key depends only on the
    /// registration, so a stats change keeps it.
    pub fn key_with(
        &self,
        key: impl Fn(&ServerEntry) -> Option<ServerKey> + Send + Sync + 'static,
    ) {
        let mut inner = self.lock();
        let keying = Keying(Arc::new(key));
        let ids: Vec<u64> = inner.servers.keys().copied().collect();
        for id in &ids {
            if let Some(held) = inner.servers.get_mut(id) {
                Arc::make_mut(held).key = (keying.0)(&held.entry);
            }
        }
        inner.keying = Some(keying);
        if !ids.is_empty() {
            self.changed(inner);
        }
    }

    /// Replaces the stats of `conn`'s server; false if it has none.
    pub fn update_stats(&self, conn: ConnId, stats: Stats) -> bool {
        let mut inner = self.lock();
        let Some(&seq) = inner.by_conn.get(&conn) else {
            return false;
        };
        let Some(held) = inner.servers.get_mut(&seq) else {
            return false;
        };
        if held.entry.stats != stats {
            // Copied only while a follower still holds the old one.
            Arc::make_mut(held).entry.stats = stats;
            self.changed(inner);
        }
        true
    }

    /// Removes `conn`'s server; false if it had none.
    pub fn unregister(&self, conn: ConnId) -> bool {
        let mut inner = self.lock();
        let Some(seq) = inner.by_conn.remove(&conn) else {
            return false;
        };
        inner.servers.remove(&seq);
        self.changed(inner);
        true
    }

    /// Drops the cached reply and announces the new version. The watch
    /// is updated while the lock is still held, so versions reach watchers
    /// in the order the changes happened.
    fn changed(&self, mut inner: MutexGuard<'_, Inner>) {
        inner.cached_reply = None;
        inner.version += 1;
        self.changes.send_replace(inner.version);
    }

    /// The whole list, each entry numbered with its sequence number, in
    /// registration order: an O(1) copy, which shares with the registry
    /// every entry that does not change next.
    pub fn list(&self) -> Entries {
        self.lock().servers.clone()
    }

    /// A receiver woken after every change of the list (it holds the
    /// latest version; changes in quick succession wake it once). Its
    /// followers wait on it with [`next_changes`].
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The framed `msRQueryGameServers` reply for the current list.
    pub fn query_reply(&self) -> Bytes {
        self.queries.fetch_add(1, Ordering::Relaxed);
        let mut inner = self.lock();
        if let Some(reply) = &inner.cached_reply {
            return reply.clone();
        }
        let json = query_reply_json(inner.servers.values().map(|k| &k.entry));
        let mut framed = Vec::with_capacity(json.len() + 12);
        encode_frame(&json, &mut framed);
        let reply = Bytes::from(framed);
        inner.cached_reply = Some(reply.clone());
        reply
    }

    /// The registered servers, in registration order.
    pub fn snapshot(&self) -> Vec<ServerEntry> {
        self.lock()
            .servers
            .values()
            .map(|k| k.entry.clone())
            .collect()
    }

    pub fn len(&self) -> usize {
        self.lock().servers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many queries were answered since start: lets the bridge's tests
    /// check that viewers share one upstream.
    pub fn queries_answered(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{GameplayMode, Players};

    fn reg(name: &str) -> Registration {
        Registration::new(name, "127.0.0.1", 20000).unwrap()
    }

    fn names(r: &Registry) -> Vec<String> {
        r.snapshot().into_iter().map(|e| e.name).collect()
    }

    #[test]
    fn order_replace_unregister() {
        let r = Registry::new();
        r.register(1, reg("a"));
        r.register(2, reg("b"));
        r.register(3, reg("c"));
        assert_eq!(names(&r), ["a", "b", "c"]);
        let stats = Stats {
            players: Players { current: 5, max: 2 },
            is_lobby_open: false,
            gameplay_mode: GameplayMode::StandardAB,
        };
        assert!(r.update_stats(1, stats));
        r.register(1, reg("a2"));
        assert_eq!(names(&r), ["b", "c", "a2"]);
        assert_eq!(r.snapshot()[2].stats, Stats::default());
        assert!(r.unregister(2));
        assert!(!r.unregister(2));
        assert!(!r.update_stats(2, stats));
        assert_eq!(names(&r), ["c", "a2"]);
    }

    #[test]
    fn reply_cache_follows_changes() {
        let r = Registry::new();
        let empty = r.query_reply();
        assert_eq!(
            &empty[..],
            b"59{\"command\":\"msRQueryGameServers\",\"content\":{\"servers\":[]}}\n"
        );
        assert_eq!(r.query_reply().as_ptr(), empty.as_ptr(), "cached");
        r.register(7, reg("x"));
        let one = r.query_reply();
        assert!(std::str::from_utf8(&one)
            .unwrap()
            .contains("\"name\":\"x\""));
        assert!(r.update_stats(7, Stats::default()), "same stats");
        assert_eq!(
            r.query_reply().as_ptr(),
            one.as_ptr(),
            "unchanged stats keep the cache"
        );
        assert_eq!(r.queries_answered(), 4);
    }

    #[test]
    fn changes_announce_each_new_version() {
        let r = Registry::new();
        let mut rx = r.changes();
        assert!(!rx.has_changed().unwrap());
        r.register(1, reg("a"));
        assert!(rx.has_changed().unwrap());
        assert_eq!(*rx.borrow_and_update(), 1);
        assert!(r.update_stats(1, Stats::default()), "same stats");
        assert!(!rx.has_changed().unwrap(), "no change, no wake-up");
        assert_eq!(*rx.borrow(), 1);
        assert_eq!(r.list().len(), 1);
        assert!(r.unregister(1));
        assert_eq!(*rx.borrow_and_update(), 2);
        assert!(!r.unregister(1));
        assert!(!rx.has_changed().unwrap());
        assert!(r.list().is_empty());
    }

    /// A follower that keeps what it was given.
    #[derive(Default)]
    struct Taken {
        whole: Vec<Vec<u64>>,
        changes: Vec<Changeset>,
    }

    impl RegistryFollower for Taken {
        fn pass_on(&mut self, change: Changeset, _: &Entries) -> Result<(), Unfollowed> {
            self.changes.push(change);
            Ok(())
        }

        fn follow(&mut self, now: &Entries) {
            self.whole.push(now.keys().copied().collect());
        }
    }

    #[test]
    fn catching_up_says_what_changed_in_the_registrys_numbers() {
        let r = Registry::new();
        r.register(1, reg("a"));
        r.register(2, reg("b"));
        let mut taken = Taken::default();
        let seen = r.catch_up(None, &mut taken);
        assert_eq!(taken.whole, [vec![1, 2]], "the whole list the first time");
        let seen = r.catch_up(Some(&seen), &mut taken);
        assert_eq!(taken.changes, [Changeset::default()], "nothing since");
        r.update_stats(
            1,
            Stats {
                players: Players { current: 3, max: 8 },
                ..Stats::default()
            },
        );
        r.register(2, reg("b2"));
        r.update_stats(1, Stats::default());
        r.update_stats(
            1,
            Stats {
                players: Players { current: 4, max: 8 },
                ..Stats::default()
            },
        );
        r.register(3, reg("c"));
        r.unregister(3);
        let seen = r.catch_up(Some(&seen), &mut taken);
        let change = &taken.changes[1];
        // Server 1's newest stats, b's re-registration as number 3 (its
        // old number removed); c came and went, so it is not there at all.
        assert_eq!(change.remove, [2]);
        assert_eq!(
            change.upsert.iter().map(|k| k.id).collect::<Vec<_>>(),
            [1, 3]
        );
        assert_eq!(change.upsert[0].entry.stats.players.current, 4);
        assert_eq!(change.upsert[1].entry.name, "b2");
        assert_eq!(seen.keys().copied().collect::<Vec<_>>(), [1, 3]);
        // A follower that refuses the change is given the whole list.
        struct Refusing(Option<Vec<u64>>);
        impl RegistryFollower for Refusing {
            fn pass_on(&mut self, _: Changeset, _: &Entries) -> Result<(), Unfollowed> {
                Err(Unfollowed)
            }
            fn follow(&mut self, now: &Entries) {
                self.0 = Some(now.keys().copied().collect());
            }
        }
        r.unregister(1);
        let mut refusing = Refusing(None);
        r.catch_up(Some(&seen), &mut refusing);
        assert_eq!(refusing.0, Some(vec![3]));
    }

    #[test]
    fn a_followers_copy_keeps_its_entries_while_the_registry_changes() {
        let r = Registry::new();
        r.register(1, reg("a"));
        let held = r.list();
        r.update_stats(
            1,
            Stats {
                players: Players { current: 5, max: 8 },
                ..Stats::default()
            },
        );
        assert_eq!(held[&1].entry.stats, Stats::default(), "copied on write");
        assert_eq!(r.list()[&1].entry.stats.players.current, 5);
        // Unchanged entries are shared, not copied.
        r.register(2, reg("b"));
        let before = r.list();
        r.update_stats(2, Stats::default());
        r.register(3, reg("c"));
        assert!(Arc::ptr_eq(&before[&1], &r.list()[&1]));
    }
}
