//! The delta rules the bridge and the browser must agree on.

use super::*;
use crate::message::{Players, ServerEntry, Stats};
use crate::{Addresses, ServerKey};

fn entry(name: &str, port: u16, current: u32) -> ServerEntry {
    ServerEntry {
        registrant: None,
        name: name.into(),
        address: Some("192.0.2.1".into()),
        port: Some(port),
        stats: Stats {
            players: Players { current, max: 4 },
            ..Stats::default()
        },
    }
}

fn ids(list: &KeyedList) -> Vec<u64> {
    list.entries().map(|k| k.id).collect()
}

#[test]
fn update_keeps_ids_sends_changes_and_numbers_new_entries() {
    let mut list = KeyedList::new();
    let a = entry("a", 1, 0);
    let b = entry("b", 2, 0);
    let c = entry("c", 3, 0);
    let first = list.update(vec![a.clone(), b.clone()]).unwrap();
    assert_eq!(first.upsert.len(), 2);
    assert!(first.remove.is_empty());
    assert_eq!(ids(&list), [1, 2]);
    assert_eq!(list.update(vec![a.clone(), b.clone()]), None, "unchanged");

    // b's stats change, c registers.
    let b2 = entry("b", 2, 3);
    let change = list.update(vec![a.clone(), b2.clone(), c.clone()]).unwrap();
    assert_eq!(
        change.upsert,
        [
            Keyed {
                key: None,
                id: 2,
                entry: b2.clone()
            },
            Keyed {
                key: None,
                id: 3,
                entry: c.clone()
            }
        ]
    );
    assert!(change.remove.is_empty());

    // a registers again: it moves to the end with a new id.
    let change = list.update(vec![b2.clone(), c.clone(), a.clone()]).unwrap();
    assert_eq!(change.remove, [1]);
    assert_eq!(
        change.upsert,
        [Keyed {
            key: None,
            id: 4,
            entry: a.clone()
        }]
    );
    assert_eq!(ids(&list), [2, 3, 4]);

    // An entry that appears in the middle (another master's order):
    // it and everything after it get fresh, rising ids.
    let d = entry("d", 4, 0);
    let change = list
        .update(vec![b2.clone(), d.clone(), c.clone(), a.clone()])
        .unwrap();
    assert_eq!(ids(&list), [2, 5, 6, 7]);
    assert_eq!(change.remove, [3, 4]);
    assert_eq!(change.upsert.len(), 3);
}

#[test]
fn twins_keep_the_list_exact() {
    let mut list = KeyedList::new();
    let one = entry("twin", 1, 1);
    let two = entry("twin", 1, 2);
    list.update(vec![one.clone(), two.clone()]);
    // The first twin leaves: which id survives does not matter, the
    // entries do.
    let change = list.update(vec![two.clone()]).unwrap();
    assert_eq!(change.remove.len(), 1);
    let entries: Vec<_> = list.entries().map(|k| k.entry.clone()).collect();
    assert_eq!(entries, [two]);
}

#[test]
fn history_catches_up_or_asks_for_a_snapshot() {
    let mut h = DeltaRing::new("e1", 3);
    for n in 1..=5 {
        assert_eq!(h.push(n), n);
    }
    let resume = |epoch: &str, since| Resume {
        epoch: epoch.into(),
        since,
    };
    assert_eq!(h.catch_up(None), CatchUp::Snapshot);
    assert_eq!(h.catch_up(Some(&resume("e2", 5))), CatchUp::Snapshot);
    assert_eq!(h.catch_up(Some(&resume("e1", 5))), CatchUp::Deltas(vec![]));
    assert_eq!(
        h.catch_up(Some(&resume("e1", 3))),
        CatchUp::Deltas(vec![&4, &5])
    );
    assert_eq!(
        h.catch_up(Some(&resume("e1", 2))),
        CatchUp::Deltas(vec![&3, &4, &5])
    );
    assert_eq!(
        h.catch_up(Some(&resume("e1", 1))),
        CatchUp::Snapshot,
        "gone"
    );
    assert_eq!(
        h.catch_up(Some(&resume("e1", 6))),
        CatchUp::Snapshot,
        "ahead"
    );
}

#[test]
fn subscribe_content_is_checked_field_by_field() {
    let parse = |s: &str| Subscribe::from_content(Some(&serde_json::from_str(s).unwrap()));
    assert_eq!(Subscribe::from_content(None), Ok(Subscribe::whole_lists()));
    assert_eq!(parse("{}"), Ok(Subscribe::whole_lists()));
    assert_eq!(
        parse(r#"{"deltas":false,"since":"x"}"#),
        Ok(Subscribe::whole_lists())
    );
    assert_eq!(parse(r#"{"deltas":true}"#), Ok(Subscribe::deltas(None)));
    assert_eq!(
        parse(r#"{"deltas":true,"epoch":"e","since":7}"#),
        Ok(Subscribe::deltas(Some(Resume {
            epoch: "e".into(),
            since: 7
        })))
    );
    assert_eq!(parse("[]"), Err(SubscribeError::NotAnObject));
    assert_eq!(parse(r#"{"deltas":"yes"}"#), Err(SubscribeError::Deltas));
    assert_eq!(parse(r#"{"deltas":1}"#), Err(SubscribeError::Deltas));
    for since in ["-1", "1.5", "\"3\"", "null"] {
        let text = format!(r#"{{"deltas":true,"epoch":"e","since":{since}}}"#);
        assert_eq!(parse(&text), Err(SubscribeError::Since), "{since}");
    }
    assert_eq!(
        parse(r#"{"deltas":true,"epoch":5,"since":1}"#),
        Err(SubscribeError::Epoch)
    );
    assert_eq!(
        parse(r#"{"deltas":true,"since":1}"#),
        Err(SubscribeError::Pair("since", "epoch"))
    );
    assert!(SubscribeError::Since.to_string().contains("`since`"));
    for s in [
        Subscribe::whole_lists(),
        Subscribe::deltas(None),
        Subscribe::deltas(Some(Resume {
            epoch: "x".into(),
            since: 9,
        })),
    ] {
        assert_eq!(Subscribe::from_content(s.to_content().as_ref()), Ok(s));
    }
}

#[test]
fn wire_shapes_and_reading_back() {
    let keyed = vec![Keyed {
        key: None,
        id: 7,
        entry: entry("Feuerland", 20000, 2),
    }];
    assert_eq!(
        snapshot_json("e1", 3, &keyed, Addresses::Shown),
        r#"{"command":"bridgeSnapshot","content":{"epoch":"e1","seq":3,"servers":[{"id":7,"name":"Feuerland","address":"192.0.2.1","port":20000,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":1}]}}"#
    );
    assert_eq!(
        snapshot_content_json("e1", 3, &keyed, Addresses::Hidden),
        r#"{"epoch":"e1","seq":3,"servers":[{"id":7,"name":"Feuerland","players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":1}]}"#
    );
    let change = Changeset {
        upsert: keyed.clone(),
        remove: vec![1, 2],
    };
    let text = delta_json("e1", 4, 3, &change, Addresses::Shown);
    assert_eq!(
        DeltaMessage::from_frame(names::DELTA, &text)
            .unwrap()
            .unwrap(),
        DeltaMessage::Delta(Delta {
            epoch: "e1".into(),
            seq: 4,
            prev: 3,
            upsert: keyed.clone(),
            remove: vec![1, 2],
        })
    );
    let text = snapshot_json("e1", 3, &keyed, Addresses::Shown);
    assert_eq!(
        DeltaMessage::from_frame(names::SNAPSHOT, &text)
            .unwrap()
            .unwrap(),
        DeltaMessage::Snapshot(Snapshot {
            epoch: "e1".into(),
            seq: 3,
            servers: keyed,
        })
    );
    assert!(DeltaMessage::from_frame("bridgeStatus", "{}").is_none());
    assert!(
        DeltaMessage::from_frame(names::DELTA, r#"{"content":{"seq":1}}"#)
            .unwrap()
            .is_err()
    );
}

#[test]
fn client_refuses_what_does_not_apply_and_stays_unchanged() {
    let snapshot = Snapshot {
        epoch: "e".into(),
        seq: 2,
        servers: vec![
            Keyed {
                key: None,
                id: 3,
                entry: entry("a", 1, 0),
            },
            Keyed {
                key: None,
                id: 5,
                entry: entry("b", 2, 0),
            },
        ],
    };
    let mut list = ClientList::from_snapshot(snapshot);
    let delta = |prev, upsert: Vec<Keyed>, remove: Vec<u64>| Delta {
        epoch: "e".into(),
        seq: prev + 1,
        prev,
        upsert,
        remove,
    };
    let before = list.clone();
    assert!(matches!(
        list.apply(&delta(1, vec![], vec![])),
        Err(ApplyError::Gap { .. })
    ));
    assert_eq!(
        list.apply(&delta(2, vec![], vec![4])),
        Err(ApplyError::UnknownRemove(4))
    );
    let late = Keyed {
        key: None,
        id: 4,
        entry: entry("c", 3, 0),
    };
    assert_eq!(
        list.apply(&delta(2, vec![late], vec![3])),
        Err(ApplyError::OutOfOrder(4))
    );
    let mut other = delta(2, vec![], vec![]);
    other.epoch = "f".into();
    assert!(matches!(list.apply(&other), Err(ApplyError::Epoch { .. })));
    assert_eq!(list, before, "failed deltas change nothing");

    // A confirmation (empty, prev = seq) changes nothing but is fine.
    let confirm = Delta {
        seq: 2,
        ..delta(2, vec![], vec![])
    };
    assert_eq!(list.apply(&confirm), Ok(()));
    assert_eq!(list, before);

    let c = Keyed {
        key: None,
        id: 6,
        entry: entry("c", 3, 1),
    };
    let b2 = Keyed {
        key: None,
        id: 5,
        entry: entry("b", 2, 4),
    };
    list.apply(&delta(2, vec![b2.clone(), c.clone()], vec![3]))
        .unwrap();
    assert_eq!(list.seq(), 3);
    assert_eq!(list.servers(), [b2.entry, c.entry]);
    // Removing the highest id does not let a lower new id in later.
    list.apply(&delta(3, vec![], vec![6])).unwrap();
    let reuse = Keyed {
        key: None,
        id: 6,
        entry: entry("d", 4, 0),
    };
    assert_eq!(
        list.apply(&delta(4, vec![reuse], vec![])),
        Err(ApplyError::OutOfOrder(6))
    );
}

#[test]
fn keys_are_given_once_written_after_the_id_and_optional_to_read() {
    let mut list = KeyedList::new();
    let by_port = |e: &ServerEntry| e.port.map(|p| ServerKey(u64::from(p)));
    list.update_keyed(vec![entry("a", 1, 0)], by_port).unwrap();
    // A stats change keeps the key without asking for it again.
    let change = list
        .update_keyed(vec![entry("a", 1, 2)], |_| panic!("not computed again"))
        .unwrap();
    assert_eq!(change.upsert[0].key, Some(ServerKey(1)));
    let text = snapshot_json(
        "e",
        1,
        &list.entries().cloned().collect::<Vec<_>>(),
        Addresses::Hidden,
    );
    assert!(
        text.contains(r#"{"id":1,"key":"0000000000000001","name":"a""#),
        "{text}"
    );
    let DeltaMessage::Snapshot(read) = DeltaMessage::from_frame(names::SNAPSHOT, &text)
        .unwrap()
        .unwrap()
    else {
        panic!("not a snapshot")
    };
    assert_eq!(read.servers[0].key, Some(ServerKey(1)));
    // Without a key (an older bridge): still a list.
    let old = r#"{"command":"bridgeSnapshot","content":{"epoch":"e","seq":1,"servers":[{"id":1,"name":"a","players":{"current":0,"max":4},"isLobbyOpen":true,"gameplayMode":1}]}}"#;
    let Some(Ok(DeltaMessage::Snapshot(read))) = DeltaMessage::from_frame(names::SNAPSHOT, old)
    else {
        panic!("an entry without a key is refused")
    };
    assert_eq!(read.servers[0].key, None);
}

/// What a client keeps per entry: the entry and how many times its id was
/// upserted, to see that an item is built from the one it replaces.
#[derive(Debug, Clone, PartialEq)]
struct Counted {
    id: u64,
    entry: ServerEntry,
    versions: u32,
}

impl ListItem for Counted {
    fn from_keyed(keyed: Keyed, old: Option<&Self>) -> Self {
        Counted {
            id: keyed.id,
            entry: keyed.entry,
            versions: old.map_or(1, |o| o.versions + 1),
        }
    }

    fn id(&self) -> u64 {
        self.id
    }
}

impl EntryItem for Counted {
    fn entry(&self) -> &ServerEntry {
        &self.entry
    }
}

#[test]
fn a_client_list_builds_its_items_from_the_ones_they_replace() {
    let keyed = |id, current| Keyed {
        id,
        key: None,
        entry: entry("a", id as u16, current),
    };
    let mut list = ClientList::<Counted>::from_snapshot_as(Snapshot {
        epoch: "e".into(),
        seq: 1,
        servers: vec![keyed(2, 0), keyed(1, 0)],
    });
    let ids: Vec<u64> = list.items().iter().map(|c| c.id).collect();
    assert_eq!(ids, [1, 2], "in id order");
    list.apply(&Delta {
        epoch: "e".into(),
        seq: 2,
        prev: 1,
        upsert: vec![keyed(2, 3), keyed(7, 0)],
        remove: vec![1],
    })
    .unwrap();
    let versions: Vec<(u64, u32)> = list.items().iter().map(|c| (c.id, c.versions)).collect();
    assert_eq!(versions, [(2, 2), (7, 1)]);
    assert_eq!(list.get(2), Some(&keyed(2, 3).entry));
}

#[test]
fn the_same_server_is_the_same_registration_whatever_its_stats() {
    let a = entry("a", 1, 0);
    assert!(same_server(&a, &entry("a", 1, 4)));
    assert!(!same_server(&a, &entry("a", 2, 0)), "another port");
    assert!(!same_server(&a, &entry("b", 1, 0)), "another name");
    let mut hidden = a.clone();
    hidden.address = None;
    assert!(!same_server(&a, &hidden), "an address hidden");
}

fn keyed(id: u64, e: ServerEntry) -> Keyed {
    Keyed {
        id,
        key: None,
        entry: e,
    }
}

/// What `list` (the entries a followed list counts) takes served whole
/// with the widest ids and keys, counted from scratch (plus the comma
/// counted after the last entry).
fn served_bytes(list: &ClientList) -> usize {
    let servers: Vec<Keyed> = list
        .iter()
        .map(|(_, entry)| Keyed {
            id: u64::MAX,
            key: Some(crate::ServerKey(u64::MAX)),
            entry: entry.clone(),
        })
        .collect();
    snapshot_json(list.epoch(), u64::MAX, &servers, Addresses::Shown).len()
        + usize::from(!list.is_empty())
}

#[test]
fn a_followed_list_takes_valid_entries_only_and_is_dropped_at_the_first_invalid_one() {
    let snapshot = |servers| {
        DeltaMessage::Snapshot(Snapshot {
            epoch: "e".into(),
            seq: 1,
            servers,
        })
    };
    let huge = entry(&"n".repeat(1_000_000), 1, 0);
    let mut held = None;
    let err = FollowedList::take(
        &mut held,
        snapshot(vec![keyed(1, entry("ok", 2, 0)), keyed(2, huge.clone())]),
        16 << 20,
    )
    .unwrap_err();
    assert_eq!(
        err,
        FollowError::Invalid {
            id: 2,
            error: crate::ValidationError::NameTooLong(1_000_000)
        }
    );
    assert!(held.is_none());

    assert_eq!(
        FollowedList::take(
            &mut held,
            snapshot(vec![keyed(1, entry("ok", 2, 0))]),
            1 << 20
        ),
        Ok(Taken::Snapshot(vec![keyed(1, entry("ok", 2, 0))]))
    );
    let mut bad_port = entry("p", 1, 0);
    bad_port.port = Some(crate::MASTER_PORT);
    let mut bad_max = entry("m", 1, 0);
    bad_max.stats.players.max = 9;
    let mut bad_address = entry("a", 1, 0);
    bad_address.address = Some("256.1.1.1".into());
    for bad in [huge, bad_port, bad_max, bad_address] {
        let mut list = held.clone();
        let delta = DeltaMessage::Delta(Delta {
            epoch: "e".into(),
            seq: 2,
            prev: 1,
            upsert: vec![keyed(1, bad)],
            remove: vec![],
        });
        assert!(matches!(
            FollowedList::take(&mut list, delta, 1 << 20),
            Err(FollowError::Invalid { id: 1, .. })
        ));
        assert!(list.is_none(), "dropped whole");
    }

    let long_epoch = DeltaMessage::Snapshot(Snapshot {
        epoch: "e".repeat(MAX_EPOCH_BYTES + 1),
        seq: 1,
        servers: vec![],
    });
    assert_eq!(
        FollowedList::take(&mut held, long_epoch, 1 << 20),
        Err(FollowError::Epoch(MAX_EPOCH_BYTES + 1))
    );
    let delta = DeltaMessage::Delta(Delta {
        epoch: "e".into(),
        seq: 2,
        prev: 1,
        upsert: vec![],
        remove: vec![],
    });
    assert_eq!(
        FollowedList::take(&mut held, delta, 1 << 20),
        Err(FollowError::DeltaFirst)
    );
}

#[test]
fn a_followed_list_knows_its_size_and_stays_within_its_bound() {
    let max = 4096;
    let named = |i: u64| entry(&format!("server {i}"), (i % 60_000 + 1) as u16, 0);
    let first = Snapshot {
        epoch: "e".into(),
        seq: 1,
        servers: (1..=5).map(|i| keyed(i, named(i))).collect(),
    };
    // The entries the ledger counts, kept beside it.
    let mut model = ClientList::from_snapshot(first.clone());
    let (mut list, servers) = FollowedList::from_snapshot(first, max).unwrap();
    assert_eq!(servers, model.items());
    assert_eq!(list.bytes(), served_bytes(&model));
    // Replaced (twice in one delta), removed and added entries: still exact.
    let mut grew = None;
    for round in 0..100u64 {
        let (seq, next) = (round + 1, round + 6);
        let mut renamed = named(round);
        renamed.name = format!("renamed {round} {}", "x".repeat((round % 7) as usize));
        let delta = Delta {
            epoch: "e".into(),
            seq: seq + 1,
            prev: seq,
            upsert: vec![
                keyed(next, named(next)),
                keyed(next - 1, renamed.clone()),
                keyed(next - 1, renamed),
            ],
            remove: if round % 3 == 0 {
                vec![next - 2]
            } else {
                vec![]
            },
        };
        match list.apply(&delta) {
            Ok(changed) => assert!(changed),
            Err(e) => {
                grew = Some(e);
                break;
            }
        }
        model.apply(&delta).unwrap();
        assert_eq!(list.len(), model.len(), "round {round}");
        assert_eq!(list.bytes(), served_bytes(&model), "round {round}");
        assert!(list.bytes() <= max);
    }
    assert!(
        matches!(grew, Some(FollowError::TooLarge { max: 4096, .. })),
        "{grew:?}"
    );
    // A snapshot past the bound is refused whole.
    let big = Snapshot {
        epoch: "e".into(),
        seq: 1,
        servers: (1..=100).map(|i| keyed(i, named(i))).collect(),
    };
    assert!(matches!(
        FollowedList::from_snapshot(big, max),
        Err(FollowError::TooLarge { .. })
    ));
}

#[test]
fn a_snapshot_in_any_order_gives_the_list_in_id_order_with_the_last_of_a_repeated_id() {
    let n = 20_000u64;
    let named = |i: u64| entry(&format!("s{i}"), 1, 0);
    let mut servers: Vec<Keyed> = (1..=n).rev().map(|i| keyed(i, named(i))).collect();
    servers.push(keyed(7, entry("seven again", 1, 0)));
    let snapshot = Snapshot {
        epoch: "e".into(),
        seq: 1,
        servers,
    };
    let list = ClientList::from_snapshot(snapshot.clone());
    assert_eq!(list.len(), n as usize);
    assert!(list.iter().map(|(id, _)| id).eq(1..=n));
    assert_eq!(list.get(7).map(|e| e.name.as_str()), Some("seven again"));
    // A follower hands on the same servers in the same order.
    let (followed, servers) = FollowedList::from_snapshot(snapshot, usize::MAX).unwrap();
    assert_eq!(followed.len(), n as usize);
    assert_eq!(servers, list.items());
}

#[test]
fn a_twin_registered_by_another_host_never_takes_the_servers_key() {
    let server = entry("a", 1, 0);
    let twin = ServerEntry {
        registrant: Some("198.51.100.7".parse().unwrap()),
        ..server.clone()
    };
    assert!(!same_server(&server, &twin), "another registrant");
    let key = |e: &ServerEntry| Some(ServerKey(u64::from(e.registrant.is_some())));
    let mut list = KeyedList::new();
    list.update_keyed(vec![server.clone(), twin.clone()], key);
    // The server leaves and the twin stays, in one change: the twin keeps
    // its own id and key, not the first position's.
    let change = list.update_keyed(vec![twin.clone()], key).unwrap();
    assert_eq!(change.remove, [1]);
    assert!(change.upsert.is_empty());
    // The server left and a twin arrived at its place, in one change: a
    // new id and the twin's own key.
    let mut list = KeyedList::new();
    list.update_keyed(vec![server], key);
    let change = list.update_keyed(vec![twin], key).unwrap();
    assert_eq!(change.remove, [1]);
    assert_eq!(change.upsert.len(), 1);
    assert_eq!(
        (change.upsert[0].id, change.upsert[0].key),
        (2, Some(ServerKey(1)))
    );
}

#[test]
fn a_delta_applied_in_place_says_what_it_took_out_and_put_in() {
    // A small deterministic generator (xorshift64), so a failure repeats.
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut below = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for round in 0..200 {
        // Up to 60 items; rounds remove none, one, two or many at once.
        let mut next_id = 0;
        let servers: Vec<Keyed> = (0..below(60))
            .map(|_| {
                next_id += 1 + below(3);
                Keyed {
                    key: None,
                    id: next_id,
                    entry: entry("a", next_id as u16, 0),
                }
            })
            .collect();
        let mut list = ClientList::from_snapshot(Snapshot {
            epoch: "e".into(),
            seq: 1,
            servers,
        });
        let before = list.clone();
        let held: Vec<u64> = before.iter().map(|(id, _)| id).collect();
        let pick = |r: u64| held[r as usize % held.len().max(1)];
        let mut remove = Vec::new();
        let mut upsert = Vec::new();
        for _ in 0..below(if round % 4 == 0 { 40 } else { 5 }) {
            match below(3) {
                0 if !held.is_empty() => remove.push(pick(below(1000))),
                1 if !held.is_empty() => upsert.push(pick(below(1000))),
                _ => {
                    next_id += 1 + below(2);
                    upsert.push(next_id);
                }
            }
        }
        remove.sort_unstable();
        remove.dedup();
        let delta = Delta {
            epoch: "e".into(),
            seq: 2,
            prev: 1,
            // An id may come twice, or be removed and upserted alike.
            upsert: upsert
                .iter()
                .map(|&id| Keyed {
                    key: None,
                    id,
                    entry: entry("b", id as u16, 1 + below(5) as u32),
                })
                .collect(),
            remove: remove.clone(),
        };
        // What the list must hold: removals first, then upserts in order.
        let mut want: std::collections::BTreeMap<u64, ServerEntry> =
            before.iter().map(|(id, e)| (id, e.clone())).collect();
        for id in &remove {
            want.remove(id);
        }
        for k in &delta.upsert {
            want.insert(k.id, k.entry.clone());
        }
        let changes = list.apply_changes(&delta).expect("a delta that applies");
        let got: Vec<(u64, ServerEntry)> = list.iter().map(|(id, e)| (id, e.clone())).collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>(), "round {round}");
        let touched = |id: u64| remove.contains(&id) || upsert.contains(&id);
        // Taken out: exactly the items touched, as they were.
        let out: Vec<(usize, Keyed)> = before
            .items()
            .iter()
            .enumerate()
            .filter(|(_, k)| touched(k.id))
            .map(|(i, k)| (i, k.clone()))
            .collect();
        assert_eq!(changes.out, out, "round {round}");
        // Put in: where the upserted ids are now.
        let put: Vec<usize> = (0..list.len())
            .filter(|&j| upsert.contains(&list.items()[j].id))
            .collect();
        assert_eq!(changes.put, put, "round {round}");
        // Every other item is where `moved` says, unchanged.
        for (i, k) in before.items().iter().enumerate() {
            match changes.moved(i) {
                None => assert!(touched(k.id), "round {round}: {i} lost"),
                Some(j) => assert_eq!(&list.items()[j], k, "round {round}: {i} → {j}"),
            }
        }
    }
}

#[test]
fn a_list_following_a_source_keeps_the_sources_ids_while_they_are_free() {
    let mut list = KeyedList::new();
    // A whole list, then a change: each new entry takes its source's id.
    list.follow(
        [keyed(4, entry("a", 1, 0)), keyed(9, entry("b", 2, 0))],
        |_| None,
    );
    assert_eq!(ids(&list), [4, 9]);
    let change = Changeset {
        upsert: vec![keyed(12, entry("c", 3, 0))],
        remove: vec![4],
    };
    list.pass_on([change], |_| None).unwrap();
    assert_eq!(ids(&list), [9, 12]);

    // A source id from a long run is taken as it is, however far ahead.
    let later = Changeset {
        upsert: vec![keyed(5_000_000, entry("d", 4, 0))],
        remove: vec![],
    };
    list.pass_on([later], |_| None).unwrap();
    assert_eq!(ids(&list), [9, 12, 5_000_000]);
    // One at or past 2^52 (a hostile feed spending the ids a page reads
    // exactly) is not: the next free id is.
    for (n, id) in [(5, 1u64 << 52), (6, u64::MAX)] {
        let past = Changeset {
            upsert: vec![keyed(id, entry(&format!("e{n}"), n, 0))],
            remove: vec![],
        };
        list.pass_on([past], |_| None).unwrap();
    }
    assert_eq!(ids(&list), [9, 12, 5_000_000, 5_000_001, 5_000_002]);

    // The ids are never reused: a list numbered by a diff after a source
    // gave ids does not go back below them, and a source id already given
    // is not taken again.
    list.update(vec![entry("b", 2, 0), entry("f", 6, 0)]);
    assert_eq!(ids(&list), [9, 5_000_003]);
    list.follow(
        [
            keyed(9, entry("b", 2, 0)),
            keyed(5_000_003, entry("f", 6, 0)),
            keyed(3, entry("g", 7, 0)),
        ],
        |_| None,
    );
    assert_eq!(ids(&list), [9, 5_000_003, 5_000_004]);
}

#[test]
fn a_list_polled_after_following_takes_the_sources_changes_since_as_if_it_had_followed_them() {
    let mut list = KeyedList::new();
    list.follow(
        [
            keyed(1, entry("a", 1, 0)),
            keyed(2, entry("b", 2, 0)),
            keyed(3, entry("c", 3, 0)),
        ],
        |_| None,
    );
    // Polled while the source cannot be followed: b is gone, c changed,
    // d and x are new (numbered by the list itself).
    list.update(vec![
        entry("a", 1, 0),
        entry("c", 3, 2),
        entry("d", 4, 0),
        entry("x", 9, 0),
    ]);
    assert_eq!(ids(&list), [1, 3, 4, 5]);
    // The source's changes since the list last followed it: what the poll
    // saw, x leaving again, and e after it.
    let since = [
        Changeset {
            upsert: vec![
                keyed(3, entry("c", 3, 2)),
                keyed(7, entry("d", 4, 0)),
                keyed(9, entry("x", 9, 0)),
            ],
            remove: vec![2],
        },
        Changeset {
            upsert: vec![],
            remove: vec![9],
        },
        Changeset {
            upsert: vec![keyed(10, entry("e", 5, 0))],
            remove: vec![],
        },
    ];
    let change = list.pass_on(since, |_| None).unwrap().unwrap();
    // Each server once, under the id it has: x, which only the poll still
    // listed, leaves; e is new.
    assert_eq!(change.remove, [5]);
    assert_eq!(change.upsert, [keyed(10, entry("e", 5, 0))]);
    assert_eq!(ids(&list), [1, 3, 4, 10]);
    // It follows the source again: the next change is passed on as it is.
    let next = Changeset {
        upsert: vec![keyed(7, entry("d", 4, 3))],
        remove: vec![1],
    };
    let change = list.pass_on([next], |_| None).unwrap().unwrap();
    assert_eq!(change.upsert, [keyed(4, entry("d", 4, 3))]);
    assert_eq!(change.remove, [1]);

    // A list that never followed the source cannot take its changes.
    let mut polled = KeyedList::new();
    polled.update(vec![entry("a", 1, 0)]);
    let change = Changeset {
        upsert: vec![keyed(2, entry("b", 2, 0))],
        remove: vec![],
    };
    assert_eq!(polled.pass_on([change], |_| None), Err(Unfollowed));
    assert_eq!(ids(&polled), [1], "left as it was");
}
