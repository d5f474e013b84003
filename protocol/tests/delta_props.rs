//! Deltas against a model of the master (`docs/protocol.md` §1 and §3):
//! for random registrations, stats updates, re-registrations, twins and
//! disconnects, a snapshot plus every delta is the master's list, entry for
//! entry and in order, and a client that resubscribes from any list it
//! held converges to the same list.

use proptest::prelude::*;
use protocol::{
    delta::{
        delta_json, snapshot_json, CatchUp, ClientList, DeltaMessage, History, KeyedList, Resume,
    },
    message::Envelope,
    Addresses, GameplayMode, Players, ServerEntry, Stats,
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
#[derive(Default)]
struct Model {
    /// (connection, entry) in registration order.
    servers: Vec<(u8, ServerEntry)>,
}

impl Model {
    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Register { conn, name, addr } => {
                self.servers.retain(|(c, _)| *c != conn);
                self.servers.push((
                    conn,
                    ServerEntry {
                        registrant: None,
                        name: format!("server {name}"),
                        address: Some(format!("192.0.2.{addr}")),
                        port: Some(20000),
                        stats: Stats::default(),
                    },
                ));
            }
            Op::Stats {
                conn,
                current,
                open,
            } => {
                if let Some((_, e)) = self.servers.iter_mut().find(|(c, _)| *c == conn) {
                    e.stats = Stats {
                        players: Players { current, max: 4 },
                        is_lobby_open: open,
                        gameplay_mode: GameplayMode::StandardA,
                    };
                }
            }
            Op::Disconnect { conn } => self.servers.retain(|(c, _)| *c != conn),
            Op::Publish => {}
        }
    }

    fn list(&self) -> Vec<ServerEntry> {
        self.servers.iter().map(|(_, e)| e.clone()).collect()
    }
}

/// Reads a frame the way the front end does: command first, then content.
fn read(text: &str) -> DeltaMessage {
    let env = Envelope::parse(text.as_bytes()).expect("an envelope");
    DeltaMessage::from_frame(&env.command, text)
        .expect("a delta command")
        .expect("a readable frame")
}

fn snapshot_of(bridge: &KeyedList, history: &History<String>) -> ClientList {
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
        let mut history: History<String> = History::new("epoch-a", ring);
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
}
