//! A hostile master's change feed: snapshots and deltas with any ids in
//! any order, entries that break the master protocol's rules (long names,
//! bad addresses and ports, player limits out of range), long epochs and
//! plain garbage, through the bridge's own apply
//! ([`bridge::live::upstream::take_message_within`]) under a small byte bound.
//! The followed list keeps no entries, so a client's list of the messages
//! it took is kept beside it, and its entries are checked.

use arbitrary::{Arbitrary, Unstructured};
use bridge::live::upstream::take_message_within;
use protocol::{
    delta::{
        names, snapshot_json, ClientList, DeltaMessage, FollowedList, Keyed, Snapshot, Taken,
        MAX_EPOCH_BYTES,
    },
    Addresses, ServerKey,
};

/// One entry as a hostile master may write it: fields drawn so that valid
/// and invalid values both come often.
#[derive(Debug, Arbitrary)]
struct Entry {
    id: u8,
    /// A name of this many characters (0: empty), of `name_char`.
    name_len: u8,
    name_char: u8,
    address: Option<u8>,
    port: Option<u16>,
    current: u32,
    max: u8,
    mode: u8,
}

impl Entry {
    fn json(&self) -> String {
        let c = match self.name_char % 5 {
            0 => 'a',
            1 => 'ꙮ',
            2 => ' ',
            3 => '\n',
            _ => '"',
        };
        let name: String = std::iter::repeat_n(c, usize::from(self.name_len)).collect();
        let mut fields = vec![
            format!(r#""id":{}"#, self.id),
            format!(r#""name":{}"#, serde_json::Value::String(name)),
        ];
        if let Some(a) = self.address {
            let address = match a % 6 {
                0 => "192.0.2.1",
                1 => "host.example",
                2 => "256.1.1.1",
                3 => "fd40::zz",
                4 => "under_score",
                _ => "2001:db8::1",
            };
            fields.push(format!(r#""address":"{address}""#));
        }
        if let Some(p) = self.port {
            fields.push(format!(
                r#""port":{}"#,
                [0, 20000, 51963, p][usize::from(p % 4)]
            ));
        }
        fields.push(format!(
            r#""players":{{"current":{},"max":{}}}"#,
            self.current,
            self.max % 8
        ));
        fields.push(r#""isLobbyOpen":true"#.to_owned());
        fields.push(format!(r#""gameplayMode":{}"#, 1 + self.mode % 2));
        format!("{{{}}}", fields.join(","))
    }
}

/// What the hostile feed sends next.
#[derive(Debug, Arbitrary)]
enum Message {
    Snapshot {
        long_epoch: bool,
        seq: u8,
        servers: Vec<Entry>,
    },
    Delta {
        long_epoch: bool,
        other_epoch: bool,
        seq: u8,
        /// `None`: the list's own `seq`.
        prev: Option<u8>,
        upsert: Vec<Entry>,
        remove: Vec<u8>,
    },
    /// Anything at all.
    Raw(Vec<u8>),
}

fn epoch(long: bool, other: bool) -> String {
    match (long, other) {
        (true, _) => "E".repeat(MAX_EPOCH_BYTES + 1),
        (false, true) => "other".to_owned(),
        (false, false) => "e".to_owned(),
    }
}

fn entries(list: &[Entry]) -> String {
    list.iter().map(Entry::json).collect::<Vec<_>>().join(",")
}

impl Message {
    fn json(&self, held: Option<&FollowedList>) -> Vec<u8> {
        match self {
            Self::Snapshot {
                long_epoch,
                seq,
                servers,
            } => format!(
                r#"{{"command":"bridgeSnapshot","content":{{"epoch":"{}","seq":{seq},"servers":[{}]}}}}"#,
                epoch(*long_epoch, false),
                entries(servers)
            )
            .into_bytes(),
            Self::Delta {
                long_epoch,
                other_epoch,
                seq,
                prev,
                upsert,
                remove,
            } => {
                let prev = prev.map_or_else(|| held.map_or(0, FollowedList::seq), u64::from);
                let remove: Vec<String> = remove.iter().map(u8::to_string).collect();
                format!(
                    r#"{{"command":"bridgeDelta","content":{{"epoch":"{}","seq":{seq},"prev":{prev},"upsert":[{}],"remove":[{}]}}}}"#,
                    epoch(*long_epoch, *other_epoch),
                    entries(upsert),
                    remove.join(",")
                )
                .into_bytes()
            }
            Self::Raw(bytes) => bytes.clone(),
        }
    }
}

/// The bounds a list held must keep, with `model` the entries it counts
/// (a client's list of the same messages): its size as served whole
/// (written with the widest ids and keys) within `max`, every entry
/// valid, ids unique and rising, a short epoch, and the model's length,
/// epoch and `seq`.
fn check(list: &FollowedList, model: &ClientList, max: usize) {
    assert!(list.bytes() <= max, "{} > {max}", list.bytes());
    assert!(list.epoch().len() <= MAX_EPOCH_BYTES);
    assert_eq!(list.len(), model.len());
    assert_eq!(list.epoch(), model.epoch());
    assert_eq!(list.seq(), model.seq());
    let widest: Vec<Keyed> = model
        .iter()
        .map(|(_, entry)| Keyed {
            id: u64::MAX,
            key: Some(ServerKey(u64::MAX)),
            entry: entry.clone(),
        })
        .collect();
    let served = snapshot_json(list.epoch(), u64::MAX, &widest, Addresses::Shown).len();
    assert!(
        served <= list.bytes(),
        "served {served} > counted {}",
        list.bytes()
    );
    let mut last = None;
    for (id, entry) in model.iter() {
        assert!(entry.validate().is_ok(), "{entry:?} is invalid");
        assert!(last < Some(id), "ids not rising at {id}");
        last = Some(id);
    }
}

/// `model` after the message `json` that `list` took as `taken`: the
/// snapshot's servers it handed on, or the same delta applied.
fn follow(model: &mut Option<ClientList>, list: &FollowedList, json: &[u8], taken: &Taken) {
    match taken {
        Taken::Snapshot(servers) => {
            *model = Some(ClientList::from_snapshot(Snapshot {
                epoch: list.epoch().to_owned(),
                seq: list.seq(),
                servers: servers.clone(),
            }));
        }
        Taken::Delta(_) => {
            let text = std::str::from_utf8(json).expect("a delta taken is text");
            let Some(Ok(DeltaMessage::Delta(delta))) = DeltaMessage::from_frame(names::DELTA, text)
            else {
                panic!("a delta taken reads as a delta");
            };
            let model = model.as_mut().expect("a delta is taken after a snapshot");
            assert_eq!(model.apply(&delta), Ok(()), "the delta taken applies");
        }
    }
}

/// Input: a bound (small, so it is reached) and a sequence of messages (via
/// `arbitrary`).
///
/// Checks: after every message the list held keeps its bounds
/// ([`check`]); a message refused leaves no list or the one before; a
/// message taken applies to a client's list as well.
pub fn feed_apply(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(bound) = u.int_in_range(0u16..=4096) else {
        return;
    };
    let max = 200 + usize::from(bound);
    let Ok(messages) = Vec::<Message>::arbitrary_take_rest(u) else {
        return;
    };
    run(max, messages);
}

/// Sends `messages` in order; returns how many lists were held after one.
fn run(max: usize, messages: Vec<Message>) -> usize {
    let mut held = 0;
    let mut list: Option<FollowedList> = None;
    // The entries `list` counts, as a client holds them.
    let mut model: Option<ClientList> = None;
    for m in messages {
        let json = m.json(list.as_ref());
        let before = list.clone();
        match take_message_within(&json, &mut list, max) {
            Ok(Some(taken)) => {
                let l = list.as_ref().expect("a message taken leaves a list");
                follow(&mut model, l, &json, &taken);
            }
            Ok(None) => {}
            Err(_) => assert!(
                list.is_none() || list == before,
                "a refused message changed the list"
            ),
        }
        if list.is_none() {
            model = None;
        }
        if let Some(l) = &list {
            let model = model.as_ref().expect("a list held has its model");
            check(l, model, max);
            held += 1;
        }
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: u8, name_len: u8) -> Entry {
        Entry {
            id,
            name_len,
            name_char: 0,
            address: Some(0),
            port: Some(1),
            current: 1,
            max: 4,
            mode: 0,
        }
    }

    #[test]
    fn valid_lists_are_held_and_hostile_ones_dropped_within_the_bound() {
        let snapshot = |servers| Message::Snapshot {
            long_epoch: false,
            seq: 1,
            servers,
        };
        let delta = |upsert| Message::Delta {
            long_epoch: false,
            other_epoch: false,
            seq: 2,
            prev: None,
            upsert,
            remove: vec![],
        };
        // Held, held, dropped (a name of 101 characters), held again,
        // dropped (past the bound), nothing held by a raw frame.
        let held = run(
            1000,
            vec![
                snapshot(vec![entry(1, 5), entry(2, 5)]),
                delta(vec![entry(3, 5)]),
                delta(vec![entry(4, 101)]),
                snapshot(vec![entry(1, 100)]),
                delta((10..40).map(|i| entry(i, 50)).collect()),
                Message::Raw(b"{\"command\":\"bridgeSnapshot\"}".to_vec()),
            ],
        );
        assert_eq!(held, 3);
    }
}
