//! The feed's list: the registry numbered with [`KeyedList`], each change
//! encoded once as a framed `bridgeDelta` for every subscriber, the newest
//! deltas kept in a [`History`] ring for subscribers that reconnect or fall
//! behind, all published on one `watch` (a subscriber only ever reads the
//! newest state, never a queue). Entries are written with their
//! registrants (`Addresses::WithRegistrants`): the feed is read by bridges
//! only, which key a server by who registered it.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use bytes::Bytes;
use protocol::{
    delta::{delta_json, snapshot_json, CatchUp, Change, History, Keyed, KeyedList, Resume},
    frame::frame,
    Addresses,
};
use tokio::sync::watch;

use crate::registry::Registry;

/// One published list: immutable, shared by every subscriber; the next
/// change publishes a new one.
#[derive(Debug)]
pub struct FeedState {
    epoch: Arc<str>,
    seq: u64,
    entries: Arc<[Keyed]>,
    /// The framed deltas up to this list.
    history: History<Bytes>,
    /// Encoded on first use: most lists only ever go out as deltas.
    snapshot: OnceLock<Bytes>,
    /// The empty delta that confirms this list (the heartbeat).
    confirm: OnceLock<Bytes>,
}

impl FeedState {
    /// This run's epoch: a restarted master starts a new one.
    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    /// The list's number within the epoch (0: nothing published yet).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// How many servers the list holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The framed `bridgeSnapshot` of this list.
    pub fn snapshot(&self) -> Bytes {
        self.snapshot
            .get_or_init(|| {
                let json = snapshot_json(
                    &self.epoch,
                    self.seq,
                    &self.entries,
                    Addresses::WithRegistrants,
                );
                Bytes::from(frame(json.as_bytes()))
            })
            .clone()
    }

    /// The framed empty delta that says "list `seq` is still current".
    pub fn confirm(&self) -> Bytes {
        self.confirm
            .get_or_init(|| {
                let json = delta_json(
                    &self.epoch,
                    self.seq,
                    self.seq,
                    &Change::default(),
                    Addresses::WithRegistrants,
                );
                Bytes::from(frame(json.as_bytes()))
            })
            .clone()
    }

    /// What a new subscriber holding `resume` is sent first: the deltas it
    /// missed while they are still in the ring, a confirmation when it
    /// missed nothing, else the snapshot (another epoch: a restarted master).
    pub fn catch_up(&self, resume: Option<&Resume>) -> Sending {
        match self.history.catch_up(resume) {
            CatchUp::Deltas(deltas) if deltas.is_empty() => Sending::Deltas(vec![self.confirm()]),
            CatchUp::Deltas(deltas) => Sending::Deltas(deltas.into_iter().cloned().collect()),
            CatchUp::Snapshot => Sending::Snapshot(self.snapshot()),
        }
    }

    /// What a subscriber that was sent list `sent` needs to reach this
    /// one: the deltas in between, or the snapshot when it fell further
    /// behind than the ring.
    pub fn after(&self, sent: u64) -> Sending {
        match self.history.since(sent) {
            Some(deltas) => Sending::Deltas(deltas.into_iter().cloned().collect()),
            None => Sending::Snapshot(self.snapshot()),
        }
    }
}

/// What one write to a subscriber carries (framed, shared by everyone who
/// is sent the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sending {
    /// The whole list.
    Snapshot(Bytes),
    /// Deltas in order (or one confirmation).
    Deltas(Vec<Bytes>),
}

impl Sending {
    /// The frames, in the order they are written.
    pub fn frames(&self) -> &[Bytes] {
        match self {
            Self::Snapshot(s) => std::slice::from_ref(s),
            Self::Deltas(d) => d,
        }
    }
}

/// The numbering and the ring, changed under one lock so lists are
/// published in the order the registry had them.
#[derive(Debug)]
struct Numbering {
    epoch: Arc<str>,
    list: KeyedList,
    history: History<Bytes>,
}

/// The feed's shared state: the registry it reads and the `watch` every
/// subscriber reads from.
#[derive(Debug)]
pub struct Changes {
    registry: Arc<Registry>,
    numbering: Mutex<Numbering>,
    tx: watch::Sender<Arc<FeedState>>,
}

impl Changes {
    /// A feed of `registry` in a new `epoch`, keeping `ring` deltas.
    pub fn new(registry: Arc<Registry>, epoch: &str, ring: usize) -> Self {
        let epoch: Arc<str> = Arc::from(epoch);
        let history = History::new(&*epoch, ring);
        let initial = Arc::new(FeedState {
            epoch: epoch.clone(),
            seq: 0,
            entries: Arc::from(Vec::new()),
            history: history.clone(),
            snapshot: OnceLock::new(),
            confirm: OnceLock::new(),
        });
        Self {
            registry,
            numbering: Mutex::new(Numbering {
                epoch,
                list: KeyedList::new(),
                history,
            }),
            tx: watch::Sender::new(initial),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Numbering> {
        self.numbering.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A receiver for one subscriber, at a list no older than the registry
    /// is now (the feed is brought up to date first: while nobody
    /// subscribes, changes are not followed).
    pub fn subscribe(&self) -> watch::Receiver<Arc<FeedState>> {
        let rx = self.tx.subscribe();
        self.refresh();
        rx
    }

    /// Whether any subscriber reads the feed: without one, following the
    /// registry would be work for nobody.
    pub fn has_subscribers(&self) -> bool {
        self.tx.receiver_count() > 0
    }

    /// The newest published list.
    pub fn current(&self) -> Arc<FeedState> {
        self.tx.borrow().clone()
    }

    /// Reads the registry and publishes its list if it changed (the first
    /// list is published even when empty). The registry is read under the
    /// feed's lock, so two refreshes cannot publish out of order.
    pub fn refresh(&self) {
        let mut numbering = self.lock();
        let first = numbering.history.seq() == 0;
        let change = numbering.list.update(self.registry.snapshot());
        if change.is_none() && !first {
            return;
        }
        let change = change.unwrap_or_default();
        let prev = numbering.history.seq();
        let json = delta_json(
            &numbering.epoch,
            prev + 1,
            prev,
            &change,
            Addresses::WithRegistrants,
        );
        let seq = numbering.history.push(Bytes::from(frame(json.as_bytes())));
        let state = Arc::new(FeedState {
            epoch: numbering.epoch.clone(),
            seq,
            entries: numbering.list.shared_entries(),
            history: numbering.history.clone(),
            snapshot: OnceLock::new(),
            confirm: OnceLock::new(),
        });
        // Sent under the lock: subscribers see lists in numbering order.
        self.tx.send_replace(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{
        delta::{ClientList, DeltaMessage},
        message::Envelope,
        Registration,
    };

    fn read(framed: &Bytes) -> DeltaMessage {
        // Strip the length prefix and the newline.
        let digits = framed.iter().take_while(|b| b.is_ascii_digit()).count();
        let text = std::str::from_utf8(&framed[digits..framed.len() - 1]).unwrap();
        let env = Envelope::parse(text.as_bytes()).unwrap();
        DeltaMessage::from_frame(&env.command, text)
            .unwrap()
            .unwrap()
    }

    fn apply(list: &mut Option<ClientList>, framed: &Bytes) {
        match read(framed) {
            DeltaMessage::Snapshot(s) => *list = Some(ClientList::from_snapshot(s)),
            DeltaMessage::Delta(d) => list.as_mut().unwrap().apply(&d).unwrap(),
        }
    }

    fn names(list: &Option<ClientList>) -> Vec<String> {
        list.as_ref()
            .unwrap()
            .iter()
            .map(|(_, e)| e.name.clone())
            .collect()
    }

    #[test]
    fn followers_catch_up_with_deltas_or_a_snapshot() {
        let registry = Arc::new(Registry::new());
        let changes = Changes::new(registry.clone(), "e", 4);
        assert_eq!(changes.current().seq(), 0);
        assert!(!changes.has_subscribers());
        let rx = changes.subscribe();
        assert!(changes.has_subscribers());
        let first = rx.borrow().clone();
        assert_eq!(first.seq(), 1, "the first list, empty");
        let mut list = None;
        for f in first.catch_up(None).frames() {
            apply(&mut list, f);
        }
        assert!(names(&list).is_empty());

        registry.register(1, Registration::new("a", "192.0.2.1", 1).unwrap());
        changes.refresh();
        changes.refresh();
        assert_eq!(changes.current().seq(), 2, "unchanged: nothing published");
        registry.register(2, Registration::new("b", "192.0.2.2", 2).unwrap());
        changes.refresh();
        let now = changes.current();
        let resume = Resume {
            epoch: "e".into(),
            since: 1,
        };
        let missed = now.catch_up(Some(&resume));
        assert_eq!(missed.frames().len(), 2, "the two deltas");
        assert!(matches!(missed, Sending::Deltas(_)));
        for f in missed.frames() {
            apply(&mut list, f);
        }
        assert_eq!(names(&list), ["a", "b"]);
        // Current: one confirmation, which applies as a no-op.
        let current = Resume {
            epoch: "e".into(),
            since: 3,
        };
        let confirm = now.catch_up(Some(&current));
        assert_eq!(confirm, Sending::Deltas(vec![now.confirm()]));
        apply(&mut list, &now.confirm());
        // Another epoch (a restarted master) or too old: the snapshot.
        let other = Resume {
            epoch: "x".into(),
            since: 3,
        };
        assert_eq!(
            now.catch_up(Some(&other)),
            Sending::Snapshot(now.snapshot())
        );
        for n in 0..5 {
            registry.update_stats(
                1,
                protocol::Stats {
                    players: protocol::Players {
                        current: n + 1,
                        max: 8,
                    },
                    ..protocol::Stats::default()
                },
            );
            changes.refresh();
        }
        let last = changes.current();
        assert_eq!(
            last.after(3),
            Sending::Snapshot(last.snapshot()),
            "beyond the ring of 4"
        );
        assert_eq!(last.after(5).frames().len(), 3);
        for f in last.after(list.as_ref().unwrap().seq()).frames() {
            apply(&mut list, f);
        }
        assert_eq!(list.as_ref().unwrap().seq(), 8);
        assert_eq!(list.unwrap().servers(), registry.snapshot());
    }
}
