//! The feed's list: the registry's own list, published as it is (its
//! sequence numbers are the feed's ids, its entries are shared, not
//! copied), with what changed since the last one found by
//! [`Registry::catch_up`] (only the parts of the list that changed are
//! visited), each change encoded once as a framed `bridgeDelta` for
//! every subscriber, the newest deltas kept in a ring for subscribers that
//! reconnect or fall behind, all published on one `watch` (a subscriber
//! only ever reads the newest state, never a queue). Entries are written
//! with their registrants (`Addresses::WithRegistrants`): the feed is read
//! by bridges only, which key a server by who registered it.

use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use protocol::{
    delta::{
        delta_json, snapshot_json, Changeset, Encoder, Entries, ListEntries, ListPublisher,
        PublishedList,
    },
    frame::frame,
    Addresses,
};
use tokio::sync::watch;

use crate::registry::{Publishing, Registry};

/// How the feed writes its messages: framed for TCP, with registrants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frames;

impl Encoder for Frames {
    type Delta = Bytes;
    type Whole = Bytes;

    fn delta(&self, epoch: &str, seq: u64, prev: u64, change: &Changeset) -> Bytes {
        let json = delta_json(epoch, seq, prev, change, Addresses::WithRegistrants);
        Bytes::from(frame(json.as_bytes()))
    }

    fn snapshot(&self, epoch: &str, seq: u64, entries: ListEntries<'_>) -> Bytes {
        let json = snapshot_json(epoch, seq, entries, Addresses::WithRegistrants);
        Bytes::from(frame(json.as_bytes()))
    }
}

/// The feed's published list: immutable, shared by every subscriber (the
/// bridge's own published list is `bridge::live::feed::FeedState`).
pub type FeedList = PublishedList<Frames>;

/// What one write to a subscriber carries (framed, shared by everyone who
/// is sent the same).
pub type Sending<'a> = protocol::delta::Sending<'a, Frames>;

/// The frames of `sending`, in the order they are written.
pub fn frames<'a>(sending: &Sending<'a>) -> Vec<&'a Bytes> {
    match sending {
        Sending::Snapshot(s) => vec![*s],
        Sending::Deltas(d) => d.clone(),
    }
}

/// The publisher and the registry's list it last published, changed under
/// one lock so lists are published in the order the registry had them.
#[derive(Debug)]
struct Numbering {
    publisher: ListPublisher<Frames>,
    /// The registry's list last published (`None`: none yet).
    seen: Option<Entries>,
}

/// The feed's shared state: the registry it reads and the `watch` every
/// subscriber reads from.
#[derive(Debug)]
pub struct FeedPublisher {
    registry: Arc<Registry>,
    numbering: Mutex<Numbering>,
    tx: watch::Sender<Arc<FeedList>>,
}

impl FeedPublisher {
    /// A feed of `registry` in a new `epoch`, keeping `ring` deltas.
    pub fn new(registry: Arc<Registry>, epoch: &str, ring: usize) -> Self {
        let publisher = ListPublisher::new(epoch, ring, Frames);
        let initial = publisher.unpublished();
        Self {
            registry,
            numbering: Mutex::new(Numbering {
                publisher,
                seen: None,
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
    pub fn subscribe(&self) -> watch::Receiver<Arc<FeedList>> {
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
    pub fn current(&self) -> Arc<FeedList> {
        self.tx.borrow().clone()
    }

    /// Takes what changed in the registry since the list last published
    /// and publishes it if anything did (the first list is published even
    /// when empty). The registry is read under the feed's lock, so two
    /// refreshes cannot publish out of order.
    pub fn refresh(&self) {
        let mut numbering = self.lock();
        let Numbering { publisher, seen } = &mut *numbering;
        let mut publishing = Publishing::new(publisher);
        *seen = Some(self.registry.catch_up(seen.as_ref(), &mut publishing));
        if let Some(state) = publishing.published() {
            // Sent under the lock: subscribers see lists in numbering order.
            self.tx.send_replace(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{
        delta::{ClientList, DeltaMessage, Resume},
        message::Envelope,
        Registration,
    };

    fn read(framed: &Bytes) -> DeltaMessage {
        let framed = framed.clone();
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
        let publisher = FeedPublisher::new(registry.clone(), "e", 4);
        assert_eq!(publisher.current().seq(), 0);
        assert!(!publisher.has_subscribers());
        let rx = publisher.subscribe();
        assert!(publisher.has_subscribers());
        let first = rx.borrow().clone();
        assert_eq!(first.seq(), 1, "the first list, empty");
        let mut list = None;
        for f in frames(&first.catch_up(None)) {
            apply(&mut list, f);
        }
        assert!(names(&list).is_empty());

        registry.register(1, Registration::new("a", "192.0.2.1", 1).unwrap());
        publisher.refresh();
        publisher.refresh();
        assert_eq!(publisher.current().seq(), 2, "unchanged: nothing published");
        registry.register(2, Registration::new("b", "192.0.2.2", 2).unwrap());
        publisher.refresh();
        let now = publisher.current();
        let resume = Resume {
            epoch: "e".into(),
            since: 1,
        };
        let missed = now.catch_up(Some(&resume));
        assert_eq!(frames(&missed).len(), 2, "the two deltas");
        assert!(matches!(missed, Sending::Deltas(_)));
        for f in frames(&missed) {
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
        apply(&mut list, now.confirm());
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
            publisher.refresh();
        }
        let last = publisher.current();
        assert_eq!(
            last.after(3),
            Sending::Snapshot(last.snapshot()),
            "beyond the ring of 4"
        );
        assert_eq!(frames(&last.after(5)).len(), 3);
        for f in frames(&last.after(list.as_ref().unwrap().seq())) {
            apply(&mut list, f);
        }
        assert_eq!(list.as_ref().unwrap().seq(), 8);
        assert_eq!(list.unwrap().servers(), registry.snapshot());
    }

    /// The ids a subscriber reads, in list order, and the registry's
    /// sequence numbers.
    fn ids_and_seqs(list: &Option<ClientList>, registry: &Registry) -> (Vec<u64>, Vec<u64>) {
        let ids = list.as_ref().unwrap().iter().map(|(id, _)| id).collect();
        let seqs = registry.list().keys().copied().collect();
        (ids, seqs)
    }

    #[test]
    fn the_feeds_ids_are_the_registrys_sequence_numbers() {
        let registry = Arc::new(Registry::new());
        for conn in 1..=3 {
            let name = format!("s{conn}");
            registry.register(conn, Registration::new(&name, "192.0.2.1", 1).unwrap());
        }
        registry.unregister(2);
        // Taken whole the first time.
        let publisher = FeedPublisher::new(registry.clone(), "e", 64);
        let _rx = publisher.subscribe();
        let mut list = None;
        for f in frames(&publisher.current().catch_up(None)) {
            apply(&mut list, f);
        }
        let (ids, seqs) = ids_and_seqs(&list, &registry);
        assert_eq!(ids, [1, 3]);
        assert_eq!(ids, seqs);
        // Changes passed on: a re-registration moves to the end with the
        // registry's new number.
        let seen = publisher.current().seq();
        registry.register(4, Registration::new("s4", "192.0.2.1", 1).unwrap());
        registry.register(1, Registration::new("s1", "192.0.2.1", 1).unwrap());
        publisher.refresh();
        for f in frames(&publisher.current().after(seen)) {
            apply(&mut list, f);
        }
        let (ids, seqs) = ids_and_seqs(&list, &registry);
        assert_eq!(ids, [3, 4, 5]);
        assert_eq!(ids, seqs);
        // Thousands of changes between two refreshes: one delta, and a new
        // subscriber's whole list, still in the same numbers.
        for n in 0..=4096 {
            let stats = protocol::Stats {
                players: protocol::Players {
                    current: n % 2,
                    max: 8,
                },
                ..protocol::Stats::default()
            };
            registry.update_stats(3, stats);
        }
        registry.register(6, Registration::new("s6", "192.0.2.1", 1).unwrap());
        publisher.refresh();
        let mut list = None;
        for f in frames(&publisher.current().catch_up(None)) {
            apply(&mut list, f);
        }
        let (ids, seqs) = ids_and_seqs(&list, &registry);
        assert_eq!(ids, [3, 4, 5, 6]);
        assert_eq!(ids, seqs);
    }
}
