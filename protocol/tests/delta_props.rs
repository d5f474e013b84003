//! Deltas against a model of the master (`docs/protocol.md` §1 and §3):
//! for random registrations, stats updates, re-registrations, twins and
//! disconnects, a snapshot plus every delta is the master's list, entry for
//! entry and in order, and a client that resubscribes from any list it
//! held converges to the same list. Changes passed on (the registry's to
//! the master's feed, the feed's delta to the bridge) are the changes a
//! diff of the whole list finds.

use proptest::prelude::*;
use protocol::{
    delta::{
        delta_json, same_server, snapshot_json, CatchUp, Changeset, ClientList, DeltaMessage,
        DeltaRing, Keyed, KeyedList, Resume,
    },
    message::Envelope,
    Addresses, GameplayMode, Players, ServerEntry, ServerKey, Stats,
};

/// What one game server connection does.
#[derive(Debug, Clone)]
enum Op {
    /// Register (again, if it already is) with one of a few names and
    /// addresses, so twins and re-registrations are common.
    Register {
        conn: u8,
        name: u8,
        addr: u8,
    },
    Stats {
        conn: u8,
        current: u32,
        open: bool,
    },
    Disconnect {
        conn: u8,
    },
    /// Publish what changed so far (changes in between are coalesced).
    Publish,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..12, 0u8..3, 0u8..2).prop_map(|(conn, name, addr)| Op::Register { conn, name, addr }),
        4 => (0u8..12, 0u32..6, any::<bool>()).prop_map(|(conn, current, open)| Op::Stats { conn, current, open }),
        2 => (0u8..12).prop_map(|conn| Op::Disconnect { conn }),
        3 => Just(Op::Publish),
    ]
}

/// The master's registry, as `docs/protocol.md` §1 describes it: one server per
/// connection, registration order, a new registration moves to the end
/// with default stats.
/// Like the master's registry it also numbers each registration (its
/// sequence number) and journals each change in those numbers.
struct Model {
    /// (connection, sequence number, entry) in registration order.
    servers: Vec<(u8, u64, ServerEntry)>,
    next_seq: u64,
    /// The changes since the last publish, as the registry journals them.
    journal: Vec<Changeset>,
    /// The registrations since the last publish.
    registered: Vec<ServerEntry>,
}

impl Default for Model {
    /// Numbers start at 1, as the registry's do.
    fn default() -> Self {
        Self {
            servers: Vec::new(),
            next_seq: 1,
            journal: Vec::new(),
            registered: Vec::new(),
        }
    }
}

impl Model {
    fn apply(&mut self, op: &Op) {
        let mut change = Changeset::default();
        match *op {
            Op::Register { conn, name, addr } => {
                if let Some(i) = self.servers.iter().position(|(c, _, _)| *c == conn) {
                    change.remove.push(self.servers.remove(i).1);
                }
                let entry = ServerEntry {
                    registrant: None,
                    name: format!("server {name}"),
                    address: Some(format!("192.0.2.{addr}")),
                    port: Some(20000),
                    stats: Stats::default(),
                };
                let seq = self.next_seq;
                self.next_seq += 1;
                change.upsert.push(Keyed {
                    id: seq,
                    key: None,
                    entry: entry.clone(),
                });
                self.registered.push(entry.clone());
                self.servers.push((conn, seq, entry));
            }
            Op::Stats {
                conn,
                current,
                open,
            } => {
                if let Some((_, seq, e)) = self.servers.iter_mut().find(|(c, _, _)| *c == conn) {
                    let stats = Stats {
                        players: Players { current, max: 4 },
                        is_lobby_open: open,
                        gameplay_mode: GameplayMode::StandardA,
                    };
                    if e.stats != stats {
                        e.stats = stats;
                        change.upsert.push(Keyed {
                            id: *seq,
                            key: None,
                            entry: e.clone(),
                        });
                    }
                }
            }
            Op::Disconnect { conn } => {
                if let Some(i) = self.servers.iter().position(|(c, _, _)| *c == conn) {
                    change.remove.push(self.servers.remove(i).1);
                }
            }
            Op::Publish => {}
        }
        if !change.is_empty() {
            self.journal.push(change);
        }
    }

    fn list(&self) -> Vec<ServerEntry> {
        self.servers.iter().map(|(_, _, e)| e.clone()).collect()
    }

    /// The list numbered with its sequence numbers, as the registry reads it.
    fn numbered(&self) -> Vec<Keyed> {
        self.servers
            .iter()
            .map(|(_, seq, entry)| Keyed {
                id: *seq,
                key: None,
                entry: entry.clone(),
            })
            .collect()
    }

    /// The sequence numbers, in list order.
    fn seqs(&self) -> Vec<u64> {
        self.servers.iter().map(|(_, seq, _)| *seq).collect()
    }

    /// The changes since the last publish, and whether a diff may number
    /// them otherwise: a registration the same as another (listed before,
    /// or registered in between) is interchangeable with it, and which of
    /// the two keeps an id is the diff's choice.
    fn take_journal(&mut self, listed_before: &[ServerEntry]) -> (Vec<Changeset>, bool) {
        let seen: Vec<&ServerEntry> = listed_before.iter().chain(&self.registered).collect();
        let twins = seen
            .iter()
            .enumerate()
            .any(|(i, a)| seen[i + 1..].iter().any(|b| same_server(a, b)));
        self.registered.clear();
        (std::mem::take(&mut self.journal), twins)
    }
}

/// A bridge's key for an entry: any function of its registration.
fn key(e: &ServerEntry) -> Option<ServerKey> {
    let text = format!("{}|{:?}|{:?}", e.name, e.address, e.port);
    Some(ServerKey(text.bytes().fold(7u64, |h, b| {
        h.wrapping_mul(31).wrapping_add(u64::from(b))
    })))
}

fn entries_of(list: &KeyedList) -> Vec<ServerEntry> {
    list.entries().map(|k| k.entry.clone()).collect()
}

/// A list's ids, in list order.
fn ids(list: &KeyedList) -> Vec<u64> {
    list.entries().map(|k| k.id).collect()
}

/// Reads a frame the way the front end does: command first, then content.
fn read(text: &str) -> DeltaMessage {
    let env = Envelope::parse(text.as_bytes()).expect("an envelope");
    DeltaMessage::from_frame(&env.command, text)
        .expect("a delta command")
        .expect("a readable frame")
}

fn snapshot_of(bridge: &KeyedList, history: &DeltaRing<String>) -> ClientList {
    let text = snapshot_json(
        history.epoch(),
        history.seq(),
        &bridge.entries().cloned().collect::<Vec<_>>(),
        Addresses::Shown,
    );
    match read(&text) {
        DeltaMessage::Snapshot(s) => ClientList::from_snapshot(s),
        other => panic!("not a snapshot: {other:?}"),
    }
}

fn apply_text(client: &mut ClientList, text: &str) {
    match read(text) {
        DeltaMessage::Delta(d) => client.apply(&d).expect("the delta applies"),
        other => panic!("not a delta: {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn snapshot_plus_deltas_is_the_masters_list(
        ops in proptest::collection::vec(op(), 1..120),
        ring in 1usize..8,
    ) {
        let mut model = Model::default();
        let mut bridge = KeyedList::new();
        let mut history: DeltaRing<String> = DeltaRing::new("epoch-a", ring);
        // The first list is published before any client subscribes.
        let mut live = snapshot_of(&bridge, &history);
        // Every list a client ever held, to resubscribe from.
        let mut held = vec![live.clone()];
        for op in ops.iter().chain(std::iter::once(&Op::Publish)) {
            model.apply(op);
            if !matches!(op, Op::Publish) {
                continue;
            }
            let Some(change) = bridge.update(model.list()) else {
                prop_assert_eq!(bridge.entries().map(|k| k.entry.clone()).collect::<Vec<_>>(), model.list());
                continue;
            };
            let prev = history.seq();
            let text = delta_json(history.epoch(), prev + 1, prev, &change, Addresses::Shown);
            history.push(text.clone());
            apply_text(&mut live, &text);
            prop_assert_eq!(live.servers(), model.list());
            // Ids rise in list order.
            let ids: Vec<u64> = bridge.entries().map(|k| k.id).collect();
            prop_assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids {:?}", ids);
            held.push(live.clone());
        }
        // Resubscribing from any list held (or from another epoch) converges.
        held.push(ClientList::from_snapshot(protocol::delta::Snapshot {
            epoch: "epoch-b".into(), seq: 1, servers: vec![],
        }));
        for old in held {
            let mut client = old.clone();
            let resume = Resume { epoch: client.epoch().to_owned(), since: client.seq() };
            match history.catch_up(Some(&resume)) {
                CatchUp::Snapshot => {
                    prop_assert!(
                        client.epoch() != history.epoch()
                            || history.seq() - client.seq() > ring as u64,
                        "a snapshot only when the deltas are gone"
                    );
                    client = snapshot_of(&bridge, &history);
                }
                CatchUp::Deltas(deltas) => {
                    for text in deltas {
                        apply_text(&mut client, text);
                    }
                }
            }
            prop_assert_eq!(client.seq(), history.seq());
            prop_assert_eq!(client.servers(), model.list());
        }
    }

    /// The registry's journal passed on by the master's feed, and the
    /// feed's delta passed on by the bridge, are the changes each would
    /// find by matching the whole list against the last one (but for which
    /// of two interchangeable registrations keeps which id), and every list
    /// is the master's, entry for entry.
    #[test]
    fn a_change_passed_on_is_the_change_a_diff_finds(
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        let mut model = Model::default();
        let mut master = KeyedList::new();
        prop_assert_eq!(master.follow(Vec::new(), |_| None), None);
        let mut bridge = KeyedList::new();
        prop_assert_eq!(bridge.follow(Vec::new(), key), None);
        let mut page: Option<ClientList> = None;
        let mut seq = 0;
        for op in ops.iter().chain(std::iter::once(&Op::Publish)) {
            model.apply(op);
            if !matches!(op, Op::Publish) {
                continue;
            }
            let listed_before = entries_of(&master);
            let (journal, twins) = model.take_journal(&listed_before);
            // The master: the registry's changes passed on, against a diff
            // of the registry's whole list from the same numbering.
            let diffed = master.clone().follow(model.numbered(), |_| None);
            let passed = master.pass_on(journal, |_| None).expect("the registry's changes fit");
            if !twins {
                prop_assert_eq!(&passed, &diffed);
            }
            prop_assert_eq!(entries_of(&master), model.list());
            // One numbering: the feed's ids are the registry's.
            prop_assert_eq!(ids(&master), model.seqs());
            // The bridge: the master's delta passed on, against its own
            // diff of the master's whole list.
            let whole: Vec<ServerEntry> = entries_of(&master);
            let diffed = bridge.clone().follow(master.entries().cloned(), key);
            let passed = match passed {
                Some(delta) => bridge.pass_on([delta], key).expect("the master's delta fits"),
                None => None,
            };
            if !twins {
                prop_assert_eq!(&passed, &diffed);
            }
            prop_assert_eq!(entries_of(&bridge), whole);
            // And so are the bridge's, which the page reads.
            prop_assert_eq!(ids(&bridge), model.seqs());
            prop_assert!(bridge.entries().all(|k| k.key == key(&k.entry)), "each entry keeps its key");
            // What the bridge passes on applies on a page.
            let Some(change) = passed else { continue };
            seq += 1;
            match page.as_mut() {
                None => {
                    let text = snapshot_json("b", seq, &bridge.entries().cloned().collect::<Vec<_>>(), Addresses::Shown);
                    let DeltaMessage::Snapshot(s) = read(&text) else { panic!("a snapshot") };
                    page = Some(ClientList::from_snapshot(s));
                }
                Some(page) => apply_text(page, &delta_json("b", seq, seq - 1, &change, Addresses::Shown)),
            }
            prop_assert_eq!(page.as_ref().map(ClientList::servers), Some(model.list()));
        }
    }

    /// A bridge that polls its master while the master's feed is down and
    /// then takes the deltas it missed (without the feed's whole list)
    /// has the master's list, each server once under one id, and what it
    /// publishes applies on a page.
    #[test]
    fn a_bridge_that_polled_while_the_feed_was_down_takes_the_deltas_it_missed(
        ops in proptest::collection::vec(op(), 1..120),
        down in proptest::collection::vec(any::<bool>(), 1..40),
    ) {
        let mut model = Model::default();
        let mut master = KeyedList::new();
        prop_assert_eq!(master.follow(Vec::new(), |_| None), None);
        let mut bridge = KeyedList::new();
        prop_assert_eq!(bridge.follow(Vec::new(), key), None);
        let mut page = ClientList::from_snapshot(protocol::delta::Snapshot {
            epoch: "b".into(), seq: 0, servers: vec![],
        });
        // The master's deltas the bridge has not taken yet.
        let mut missed = Vec::new();
        let mut down = down.iter().cycle();
        for op in ops.iter().chain(std::iter::once(&Op::Publish)) {
            model.apply(op);
            if !matches!(op, Op::Publish) {
                continue;
            }
            let (journal, _) = model.take_journal(&entries_of(&master));
            if let Some(delta) = master.pass_on(journal, |_| None).expect("the registry's changes fit") {
                missed.push(delta);
            }
            let change = if *down.next().unwrap_or(&false) {
                // The feed is down: the bridge polls the master's list.
                bridge.update_keyed(entries_of(&master), key)
            } else {
                bridge
                    .pass_on(std::mem::take(&mut missed), key)
                    .expect("the deltas missed are taken")
            };
            prop_assert_eq!(entries_of(&bridge), entries_of(&master));
            let ids = ids(&bridge);
            prop_assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids {:?}", ids);
            prop_assert!(bridge.entries().all(|k| k.key == key(&k.entry)), "each entry keeps its key");
            let Some(change) = change else { continue };
            let seq = page.seq() + 1;
            apply_text(&mut page, &delta_json("b", seq, seq - 1, &change, Addresses::Shown));
            prop_assert_eq!(page.servers(), entries_of(&bridge));
        }
    }
}
