//! The list of registered game servers: one per connection, kept in
//! registration order, with the serialized query reply cached until the list
//! changes (queries are the hot path; changes are rare by comparison).
//! Programs that embed the master (the bridge) watch [`Registry::changes`]
//! instead of polling the list, and read what changed
//! ([`Registry::changes_since`]) instead of the whole list: each entry is
//! numbered with its sequence number, and each change is kept, as a
//! [`Changeset`] in those numbers, in a bounded journal.

use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    net::IpAddr,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex, MutexGuard,
    },
    time::Duration,
};

use bytes::Bytes;
use protocol::{
    delta::{Changeset, Keyed, Unfollowed},
    frame::encode_frame,
    message::query_reply_json,
    Registration, ServerEntry, Stats,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Identifies one TCP connection to the master.
pub type ConnId = u64;

/// How many changes the journal keeps: a reader further behind than this
/// reads the whole list ([`Registry::numbered`]). A change holds one entry,
/// so the journal stays within a few hundred kilobytes.
pub const JOURNAL: usize = 4096;

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
    /// Registration order: sequence number → entry.
    servers: BTreeMap<u64, ServerEntry>,
    /// Which sequence number each connection's server has.
    by_conn: HashMap<ConnId, u64>,
    /// The current list's `msRQueryGameServers`, framed.
    cached_reply: Option<Bytes>,
    /// The latest changes, oldest first: the version each made, and what
    /// it changed, with the entries' sequence numbers as ids.
    journal: VecDeque<(u64, Changeset)>,
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
    /// Takes the registry's changes, in its sequence numbers, in order;
    /// [`Unfollowed`] when they do not fit the list (left as it was), and
    /// the whole list is needed.
    fn pass_on(&mut self, changes: Vec<Changeset>) -> Result<(), Unfollowed>;

    /// Takes the registry's whole list, numbered.
    fn follow(&mut self, whole: Vec<Keyed>);
}

impl Registry {
    /// Brings `follower` from `version` (the registry's version it last
    /// reached; `None` the first time) to the registry's list now: the
    /// changes since, or the whole list when the journal no longer reaches
    /// back or the follower cannot take them. Returns the version reached,
    /// to pass next time. The one way the registry is followed, by the
    /// master's feed and by an embedded master's bridge alike.
    pub fn catch_up(&self, version: Option<u64>, follower: &mut impl RegistryFollower) -> u64 {
        if let Some((now, changes)) = version.and_then(|v| self.changes_since(v)) {
            if follower.pass_on(changes).is_ok() {
                return now;
            }
        }
        let (now, whole) = self.numbered();
        follower.follow(whole);
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
        let mut change = Changeset::default();
        if let Some(old) = inner.by_conn.remove(&conn) {
            inner.servers.remove(&old);
            change.remove.push(old);
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
        change.upsert.push(numbered(seq, &entry));
        inner.servers.insert(seq, entry);
        inner.by_conn.insert(conn, seq);
        self.changed(inner, change);
    }

    /// Replaces the stats of `conn`'s server; false if it has none.
    pub fn update_stats(&self, conn: ConnId, stats: Stats) -> bool {
        let mut inner = self.lock();
        let Some(&seq) = inner.by_conn.get(&conn) else {
            return false;
        };
        let Some(entry) = inner.servers.get_mut(&seq) else {
            return false;
        };
        if entry.stats != stats {
            entry.stats = stats;
            let change = Changeset {
                upsert: vec![numbered(seq, entry)],
                remove: Vec::new(),
            };
            self.changed(inner, change);
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
        let change = Changeset {
            upsert: Vec::new(),
            remove: vec![seq],
        };
        self.changed(inner, change);
        true
    }

    /// Drops the cached reply, journals `change` and announces the new
    /// version. The watch is updated while the lock is still held, so
    /// versions reach watchers in the order the changes happened.
    fn changed(&self, mut inner: MutexGuard<'_, Inner>, change: Changeset) {
        inner.cached_reply = None;
        inner.version += 1;
        let version = inner.version;
        if inner.journal.len() == JOURNAL {
            inner.journal.pop_front();
        }
        inner.journal.push_back((version, change));
        self.changes.send_replace(version);
    }

    /// What changed after `version`, in order, and the version it leads
    /// to; `None` when the journal no longer reaches back that far (or
    /// `version` is not one this registry made): then read
    /// [`Registry::numbered`]. O(changes), whatever the list's size.
    pub fn changes_since(&self, version: u64) -> Option<(u64, Vec<Changeset>)> {
        let inner = self.lock();
        if version > inner.version {
            return None;
        }
        let missing = usize::try_from(inner.version - version).ok()?;
        if missing > inner.journal.len() {
            return None;
        }
        let changes = inner
            .journal
            .iter()
            .skip(inner.journal.len() - missing)
            .map(|(_, c)| c.clone())
            .collect();
        Some((inner.version, changes))
    }

    /// The whole list with its version, each entry numbered with its
    /// sequence number (the ids [`Registry::changes_since`] uses), in
    /// registration order.
    pub fn numbered(&self) -> (u64, Vec<Keyed>) {
        let inner = self.lock();
        let list = inner
            .servers
            .iter()
            .map(|(&seq, entry)| numbered(seq, entry))
            .collect();
        (inner.version, list)
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
        let json = query_reply_json(inner.servers.values());
        let mut framed = Vec::with_capacity(json.len() + 12);
        encode_frame(&json, &mut framed);
        let reply = Bytes::from(framed);
        inner.cached_reply = Some(reply.clone());
        reply
    }

    /// The registered servers, in registration order.
    pub fn snapshot(&self) -> Vec<ServerEntry> {
        self.lock().servers.values().cloned().collect()
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

/// An entry with its sequence number as its id (no key: keys are the
/// bridge's).
fn numbered(seq: u64, entry: &ServerEntry) -> Keyed {
    Keyed {
        id: seq,
        key: None,
        entry: entry.clone(),
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
        let (version, servers) = r.numbered();
        assert_eq!(version, 1);
        assert_eq!(servers.len(), 1);
        assert!(r.unregister(1));
        assert_eq!(*rx.borrow_and_update(), 2);
        assert!(!r.unregister(1));
        assert!(!rx.has_changed().unwrap());
        assert!(r.numbered().1.is_empty());
    }

    #[test]
    fn the_journal_says_what_changed_in_the_registrys_numbers() {
        let r = Registry::new();
        r.register(1, reg("a"));
        r.register(2, reg("b"));
        let (version, list) = r.numbered();
        assert_eq!(version, 2);
        assert_eq!(list.iter().map(|k| k.id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(r.changes_since(2), Some((2, vec![])));
        r.update_stats(
            1,
            Stats {
                players: Players { current: 3, max: 8 },
                ..Stats::default()
            },
        );
        r.register(2, reg("b2"));
        r.unregister(1);
        let (now, changes) = r.changes_since(2).unwrap();
        assert_eq!(now, 5);
        assert_eq!(changes.len(), 3);
        assert_eq!(changes[0].upsert[0].id, 1);
        assert_eq!(changes[0].upsert[0].entry.stats.players.current, 3);
        assert_eq!(changes[1].remove, [2]);
        assert_eq!(changes[1].upsert[0].id, 3);
        assert_eq!(changes[1].upsert[0].entry.name, "b2");
        assert_eq!(changes[2].remove, [1]);
        assert_eq!(changes[2].upsert, []);
        assert_eq!(r.changes_since(6), None, "a version not made yet");
        for n in 0..JOURNAL as u32 {
            r.update_stats(
                2,
                Stats {
                    players: Players {
                        current: n % 7 + 1,
                        max: 8,
                    },
                    ..Stats::default()
                },
            );
        }
        assert_eq!(r.changes_since(2), None, "beyond the journal");
        let (version, _) = r.numbered();
        assert_eq!(r.changes_since(version - 1).unwrap().1.len(), 1);
    }
}
