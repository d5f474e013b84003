//! List deltas (`protocol::delta`): the page's [`ClientList::apply`] on
//! arbitrary snapshots and deltas, and the bridge's [`KeyedList`] and
//! [`DeltaRing`] feeding a page's list through the wire format.

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use protocol::{
    bridge::names,
    delta::{
        delta_json, snapshot_json, ApplyError, CatchUp, ClientList, Delta, DeltaMessage, DeltaRing,
        Keyed, KeyedList, Resume, Snapshot,
    },
    Addresses, GameplayMode, Players, ServerEntry, Stats,
};

/// An entry from a few names and addresses, so that lists share
/// registrations often.
#[derive(Debug, Arbitrary)]
struct Entry {
    name: u8,
    address: Option<bool>,
    port: Option<u16>,
    current: u32,
    max: u8,
    open: bool,
    standard_ab: bool,
}

impl Entry {
    fn server(&self) -> ServerEntry {
        const NAMES: [&str; 4] = ["Feuerland", "轰炸机人", "a", "b"];
        ServerEntry {
            registrant: None,
            name: NAMES[usize::from(self.name) % NAMES.len()].to_owned(),
            address: self
                .address
                .map(|v4| if v4 { "192.0.2.1" } else { "host.example" }.to_owned()),
            // A few ports only: the same registration again, often.
            port: self.port.map(|p| 20000 + p % 3),
            stats: Stats {
                players: Players {
                    current: self.current % 6,
                    max: 2 + self.max % 3,
                },
                is_lobby_open: self.open,
                gameplay_mode: if self.standard_ab {
                    GameplayMode::StandardAB
                } else {
                    GameplayMode::StandardA
                },
            },
        }
    }
}

fn keyed(items: &[(u8, Entry)]) -> Vec<Keyed> {
    items
        .iter()
        .map(|(id, e)| Keyed {
            id: u64::from(*id),
            key: None,
            entry: e.server(),
        })
        .collect()
}

fn epoch(n: Option<u8>, current: &str) -> String {
    n.map_or_else(|| current.to_owned(), |n| format!("e{}", n % 3))
}

/// What the page may be sent, in any order and with any numbers.
#[derive(Debug, Arbitrary)]
enum Op {
    Snapshot {
        epoch: u8,
        seq: u8,
        servers: Vec<(u8, Entry)>,
    },
    Delta {
        /// `None`: the list's own epoch.
        epoch: Option<u8>,
        seq: u8,
        /// `None`: the list's own `seq`.
        prev: Option<u8>,
        upsert: Vec<(u8, Entry)>,
        remove: Vec<u8>,
    },
}

/// The list the page should hold, kept the obvious way.
#[derive(Debug, Clone, Default, PartialEq)]
struct Model {
    epoch: String,
    seq: u64,
    entries: BTreeMap<u64, ServerEntry>,
    max_id: u64,
}

impl Model {
    fn from_snapshot(s: &Snapshot) -> Self {
        let entries: BTreeMap<u64, ServerEntry> =
            s.servers.iter().map(|k| (k.id, k.entry.clone())).collect();
        Self {
            epoch: s.epoch.clone(),
            seq: s.seq,
            max_id: entries.keys().next_back().copied().unwrap_or(0),
            entries,
        }
    }

    /// The rules of `docs/protocol.md` §3: same epoch, `prev` is this
    /// list, removed ids exist, ids new to the list rise above every id
    /// seen; then removals, then upserts (the last one for an id wins).
    fn apply(&mut self, d: &Delta) -> Result<(), ApplyError> {
        if d.epoch != self.epoch {
            return Err(ApplyError::Epoch {
                have: self.epoch.clone(),
                got: d.epoch.clone(),
            });
        }
        if d.prev != self.seq {
            return Err(ApplyError::Gap {
                have: self.seq,
                prev: d.prev,
            });
        }
        if let Some(id) = d.remove.iter().find(|id| !self.entries.contains_key(id)) {
            return Err(ApplyError::UnknownRemove(*id));
        }
        let mut max_id = self.max_id;
        for k in &d.upsert {
            if !self.entries.contains_key(&k.id) {
                if k.id <= max_id {
                    return Err(ApplyError::OutOfOrder(k.id));
                }
                max_id = k.id;
            }
        }
        for id in &d.remove {
            self.entries.remove(id);
        }
        for k in &d.upsert {
            self.entries.insert(k.id, k.entry.clone());
        }
        self.max_id = max_id;
        self.seq = d.seq;
        Ok(())
    }
}

fn assert_same(list: &ClientList, model: &Model) {
    assert_eq!(list.epoch(), model.epoch);
    assert_eq!(list.seq(), model.seq);
    assert_eq!(list.len(), model.entries.len());
    let got: Vec<(u64, &ServerEntry)> = list.iter().collect();
    let want: Vec<(u64, &ServerEntry)> = model.entries.iter().map(|(id, e)| (*id, e)).collect();
    assert_eq!(got, want, "the list is not the model's");
    for (id, e) in &model.entries {
        assert_eq!(list.get(*id), Some(e));
    }
    assert_eq!(list.resume().since, model.seq);
}

/// Reads a frame the bridge would write, as the page does.
fn read(command: &str, json: &str) -> DeltaMessage {
    match DeltaMessage::from_frame(command, json) {
        Some(Ok(m)) => m,
        other => panic!("{json} does not read back: {other:?}"),
    }
}

/// Input: a sequence of snapshots and deltas (via `arbitrary`), ids and
/// sequence numbers small so that they collide.
///
/// Checks: each message survives the wire (written by the bridge's writer,
/// read by the page's); [`ClientList::apply`] accepts exactly the deltas
/// the protocol's rules allow, with the same error, and leaves exactly the
/// list those rules give (sorted by id, every lookup right); a refused
/// delta changes nothing.
pub fn delta_apply(data: &[u8]) {
    let Ok(ops) = Vec::<Op>::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut list = ClientList::default();
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Snapshot {
                epoch,
                seq,
                servers,
            } => {
                let snapshot = Snapshot {
                    epoch: format!("e{}", epoch % 3),
                    seq: u64::from(seq),
                    servers: keyed(&servers),
                };
                let json = snapshot_json(
                    &snapshot.epoch,
                    snapshot.seq,
                    &snapshot.servers,
                    Addresses::Shown,
                );
                assert_eq!(
                    read(names::SNAPSHOT, &json),
                    DeltaMessage::Snapshot(snapshot.clone())
                );
                model = Model::from_snapshot(&snapshot);
                list = ClientList::from_snapshot(snapshot);
            }
            Op::Delta {
                epoch: e,
                seq,
                prev,
                upsert,
                remove,
            } => {
                let delta = Delta {
                    epoch: epoch(e, list.epoch()),
                    seq: u64::from(seq),
                    prev: prev.map_or(list.seq(), u64::from),
                    upsert: keyed(&upsert),
                    remove: remove.into_iter().map(u64::from).collect(),
                };
                let change = protocol::delta::Changeset {
                    upsert: delta.upsert.clone(),
                    remove: delta.remove.clone(),
                };
                let json = delta_json(
                    &delta.epoch,
                    delta.seq,
                    delta.prev,
                    &change,
                    Addresses::Shown,
                );
                assert_eq!(
                    read(names::DELTA, &json),
                    DeltaMessage::Delta(delta.clone())
                );
                let before = list.clone();
                let want = model.apply(&delta);
                let got = list.apply(&delta);
                assert_eq!(got, want, "apply's verdict on {delta:?}");
                if got.is_err() {
                    assert_eq!(list, before, "a refused delta changed the list");
                }
            }
        }
        assert_same(&list, &model);
    }
}

/// The master's list over time, and when a second page joins or resumes.
#[derive(Debug, Arbitrary)]
struct Sync {
    lists: Vec<Vec<Entry>>,
    history: u8,
    resume_at: u8,
}

fn without_address(e: &ServerEntry) -> ServerEntry {
    ServerEntry {
        registrant: None,
        address: None,
        port: None,
        ..e.clone()
    }
}

/// Input: a sequence of the master's lists (via `arbitrary`), from a few
/// names and addresses so that registrations repeat and move.
///
/// Checks the promise of `docs/protocol.md` §3 end to end: the bridge's [`KeyedList`]
/// numbers each list with ids rising in list order; the delta it computes,
/// written with and without addresses and read by the page, turns the
/// page's list into exactly the master's; a page that joins from a snapshot
/// sees the same; and a page that resumes from an earlier `seq` gets from
/// [`DeltaRing`] the deltas that bring it up to date, or a snapshot only when
/// they are no longer kept.
pub fn delta_sync(data: &[u8]) {
    let Ok(input) = Sync::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    const EPOCH: &str = "e";
    let capacity = 1 + usize::from(input.history % 8);
    let mut bridge = KeyedList::new();
    let mut history: DeltaRing<String> = DeltaRing::new(EPOCH, capacity);
    let start = |addresses| {
        let json = snapshot_json(EPOCH, 0, &[], addresses);
        match read(names::SNAPSHOT, &json) {
            DeltaMessage::Snapshot(s) => ClientList::from_snapshot(s),
            DeltaMessage::Delta(_) => panic!("a snapshot read as a delta"),
        }
    };
    let mut page = start(Addresses::Shown);
    let mut hidden = start(Addresses::Hidden);
    let mut earlier = vec![page.clone()];
    for list in &input.lists {
        let servers: Vec<ServerEntry> = list.iter().map(Entry::server).collect();
        if let Some(change) = bridge.update(servers.clone()) {
            let prev = history.seq();
            let json = delta_json(EPOCH, prev + 1, prev, &change, Addresses::Shown);
            let seq = history.push(json.clone());
            for (page, json) in [
                (&mut page, json),
                (
                    &mut hidden,
                    delta_json(EPOCH, seq, prev, &change, Addresses::Hidden),
                ),
            ] {
                let DeltaMessage::Delta(delta) = read(names::DELTA, &json) else {
                    panic!("a delta read as a snapshot");
                };
                if let Err(e) = page.apply(&delta) {
                    panic!("the bridge's delta {json} does not apply: {e}");
                }
            }
            earlier.push(page.clone());
        }
        let ids: Vec<u64> = bridge.entries().map(|k| k.id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids out of order");
        let numbered: Vec<&ServerEntry> = bridge.entries().map(|k| &k.entry).collect();
        assert_eq!(numbered, servers.iter().collect::<Vec<_>>());
        assert_eq!(
            page.servers(),
            servers,
            "the page's list is not the master's"
        );
        assert_eq!(page.iter().map(|(id, _)| id).collect::<Vec<_>>(), ids);
        let bare: Vec<ServerEntry> = servers.iter().map(without_address).collect();
        assert_eq!(hidden.servers(), bare);
    }
    assert_eq!(page.seq(), history.seq());
    // A page that joins now.
    let json = snapshot_json(
        EPOCH,
        history.seq(),
        &bridge.entries().cloned().collect::<Vec<_>>(),
        protocol::Addresses::Shown,
    );
    let DeltaMessage::Snapshot(snapshot) = read(names::SNAPSHOT, &json) else {
        panic!("a snapshot read as a delta");
    };
    let joined = ClientList::from_snapshot(snapshot);
    assert!(joined.iter().eq(page.iter()));
    // A page that resumes from an earlier list.
    let at = usize::from(input.resume_at) % earlier.len();
    let mut old = earlier[at].clone();
    match history.catch_up(Some(&old.resume())) {
        CatchUp::Deltas(deltas) => {
            for json in deltas {
                let DeltaMessage::Delta(delta) = read(names::DELTA, json) else {
                    panic!("a delta read as a snapshot");
                };
                if let Err(e) = old.apply(&delta) {
                    panic!("a kept delta does not apply on resume: {e}");
                }
            }
            assert!(old.iter().eq(page.iter()));
            assert_eq!(old.seq(), page.seq());
        }
        CatchUp::Snapshot => {
            let missing = history.seq() - old.seq();
            assert!(
                missing > capacity as u64,
                "a snapshot though the {missing} deltas are kept"
            );
        }
    }
    // Another epoch always gets a snapshot.
    let other = Resume {
        epoch: "other".into(),
        since: history.seq(),
    };
    assert_eq!(history.catch_up(Some(&other)), CatchUp::Snapshot);
}
