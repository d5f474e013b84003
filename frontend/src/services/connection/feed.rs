//! The lobby list as the connection keeps it: a [`ClientList`] built from a
//! snapshot (fetched from `/api/servers` or sent on the socket) and kept
//! current by deltas (`docs/protocol.md` §3). A pure state machine the
//! socket drives, so its rules are tested natively.
//!
//! The page never shows a list it cannot vouch for: a delta that does not
//! apply (a gap, another epoch, an unknown id) changes nothing and makes the
//! connection subscribe again with the `epoch` and `seq` it holds, and the
//! bridge answers with what was missed or a snapshot.

use protocol::{
    bridge::ClientMessage,
    delta::{ApplyError, ClientList, Delta, Keyed, Snapshot, Subscribe},
    ServerEntry,
};

/// What the page's rows must do, in the order the feed says so.
#[derive(Debug, Clone, PartialEq)]
pub enum ListUpdate {
    /// A whole list without ids (`msRQueryGameServers`: polling answers,
    /// bridges without deltas).
    Whole(Vec<ServerEntry>),
    /// The whole list with ids, in list order: a snapshot, or the feed's
    /// list again after whole lists replaced the rows.
    Snapshot(Vec<Keyed>),
    /// Only what changed: entries to add or replace by id, ids to drop.
    Delta {
        upsert: Vec<Keyed>,
        remove: Vec<u64>,
    },
    /// The list was confirmed current; nothing changed.
    Current,
}

/// What the connection does after a list message.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Hand this to the page.
    Show(ListUpdate),
    /// The message did not apply: send this `bridgeSubscribe` (and show nothing).
    Resubscribe { text: String, why: ApplyError },
}

/// The list a connection holds across its sockets.
#[derive(Debug, Default)]
pub struct Feed {
    list: Option<ClientList>,
    /// The page's rows came from a whole list since the last keyed update,
    /// so the next delta must resend the whole keyed list.
    rows_unkeyed: bool,
}

impl Feed {
    pub fn new() -> Self {
        Self::default()
    }

    /// The list held, if any.
    pub fn list(&self) -> Option<&ClientList> {
        self.list.as_ref()
    }

    /// The `bridgeSubscribe` to send on a new socket (and after a delta
    /// that did not apply): deltas, continuing from the list held.
    pub fn subscribe_json(&self) -> String {
        let resume = self.list.as_ref().map(ClientList::resume);
        ClientMessage::Subscribe(Subscribe::deltas(resume)).to_json()
    }

    /// A snapshot replaces the list, whatever it held.
    pub fn on_snapshot(&mut self, snapshot: Snapshot) -> Step {
        self.list = Some(ClientList::from_snapshot(snapshot));
        self.rows_unkeyed = false;
        // From the list: in id order whatever the wire's order.
        Step::Show(ListUpdate::Snapshot(self.keyed()))
    }

    /// A delta applies to the list held, all or nothing. One the list
    /// already went past (sent before the bridge read a resubscribe, and
    /// then again in its answer) changes nothing and asks for nothing.
    pub fn on_delta(&mut self, delta: Delta) -> Step {
        if let Some(list) = &self.list {
            if list.epoch() == delta.epoch && delta.prev < list.seq() && delta.seq <= list.seq() {
                return Step::Show(ListUpdate::Current);
            }
        }
        let applied = match self.list.as_mut() {
            Some(list) => list.apply(&delta),
            // Only after a subscribe without a list, whose answer is a
            // snapshot: a delta first means it went missing.
            None => Err(ApplyError::Gap {
                have: 0,
                prev: delta.prev,
            }),
        };
        match applied {
            Err(why) => Step::Resubscribe {
                text: self.subscribe_json(),
                why,
            },
            Ok(()) if self.rows_unkeyed => {
                self.rows_unkeyed = false;
                Step::Show(ListUpdate::Snapshot(self.keyed()))
            }
            Ok(()) if delta.upsert.is_empty() && delta.remove.is_empty() => {
                Step::Show(ListUpdate::Current)
            }
            Ok(()) => Step::Show(ListUpdate::Delta {
                upsert: delta.upsert,
                remove: delta.remove,
            }),
        }
    }

    /// A whole list (the answer to a poll) replaces the rows; the keyed list
    /// stays for the next subscribe, and the next delta resends it whole.
    pub fn on_whole(&mut self, servers: Vec<ServerEntry>) -> Step {
        self.rows_unkeyed = true;
        Step::Show(ListUpdate::Whole(servers))
    }

    fn keyed(&self) -> Vec<Keyed> {
        self.list
            .iter()
            .flat_map(|l| l.iter())
            .map(|(id, entry)| Keyed {
                key: None,
                id,
                entry: entry.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use protocol::{Players, Stats};

    use super::*;

    fn keyed(id: u64, current: u32) -> Keyed {
        Keyed {
            key: None,
            id,
            entry: ServerEntry {
                name: format!("s{id}"),
                address: Some("192.0.2.1".into()),
                port: Some(20000 + id as u16),
                stats: Stats {
                    players: Players { current, max: 4 },
                    ..Stats::default()
                },
            },
        }
    }

    fn snapshot(seq: u64, servers: Vec<Keyed>) -> Snapshot {
        Snapshot {
            epoch: "e".into(),
            seq,
            servers,
        }
    }

    fn delta(prev: u64, upsert: Vec<Keyed>, remove: Vec<u64>) -> Delta {
        Delta {
            epoch: "e".into(),
            seq: prev + 1,
            prev,
            upsert,
            remove,
        }
    }

    #[test]
    fn subscribes_with_what_it_holds() {
        let mut feed = Feed::new();
        assert_eq!(
            feed.subscribe_json(),
            r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#
        );
        feed.on_snapshot(snapshot(4, vec![keyed(1, 0)]));
        assert_eq!(
            feed.subscribe_json(),
            r#"{"command":"bridgeSubscribe","content":{"deltas":true,"epoch":"e","since":4}}"#
        );
    }

    #[test]
    fn deltas_show_only_what_changed() {
        let mut feed = Feed::new();
        assert_eq!(
            feed.on_snapshot(snapshot(1, vec![keyed(1, 0), keyed(2, 0)])),
            Step::Show(ListUpdate::Snapshot(vec![keyed(1, 0), keyed(2, 0)]))
        );
        assert_eq!(
            feed.on_delta(delta(1, vec![keyed(2, 3), keyed(3, 0)], vec![1])),
            Step::Show(ListUpdate::Delta {
                upsert: vec![keyed(2, 3), keyed(3, 0)],
                remove: vec![1]
            })
        );
        // The bridge's confirmation after a resubscribe: prev = seq.
        let confirm = Delta {
            seq: 2,
            ..delta(2, vec![], vec![])
        };
        assert_eq!(feed.on_delta(confirm), Step::Show(ListUpdate::Current));
        let list = feed.list().expect("a list");
        assert_eq!(list.seq(), 2);
        assert_eq!(list.servers(), [keyed(2, 3).entry, keyed(3, 0).entry]);
    }

    #[test]
    fn a_delta_that_does_not_apply_resubscribes_and_shows_nothing() {
        let mut feed = Feed::new();
        // Before any snapshot.
        let Step::Resubscribe { text, .. } = feed.on_delta(delta(3, vec![], vec![])) else {
            panic!("applied a delta without a list")
        };
        assert_eq!(
            text,
            r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#
        );
        feed.on_snapshot(snapshot(5, vec![keyed(1, 0)]));
        let before = feed.list().cloned();
        // A delta the list already went past is old news, not a gap.
        assert_eq!(
            feed.on_delta(delta(3, vec![keyed(7, 0)], vec![])),
            Step::Show(ListUpdate::Current)
        );
        assert_eq!(feed.list().cloned(), before);
        let bad = [
            (delta(6, vec![], vec![]), "gap"),
            (delta(5, vec![], vec![9]), "unknown id"),
            (
                Delta {
                    epoch: "other".into(),
                    ..delta(5, vec![], vec![])
                },
                "epoch",
            ),
        ];
        for (d, what) in bad {
            match feed.on_delta(d) {
                Step::Resubscribe { text, .. } => assert_eq!(
                    text,
                    r#"{"command":"bridgeSubscribe","content":{"deltas":true,"epoch":"e","since":5}}"#,
                    "{what}"
                ),
                other => panic!("{what}: {other:?}"),
            }
            assert_eq!(feed.list().cloned(), before, "{what} changed the list");
        }
    }

    #[test]
    fn after_a_whole_list_the_next_delta_resends_the_keyed_list() {
        let mut feed = Feed::new();
        feed.on_snapshot(snapshot(1, vec![keyed(1, 0)]));
        let whole = vec![keyed(1, 2).entry];
        assert_eq!(
            feed.on_whole(whole.clone()),
            Step::Show(ListUpdate::Whole(whole))
        );
        // The keyed list is still the one to resume from.
        assert_eq!(feed.list().map(ClientList::seq), Some(1));
        assert_eq!(
            feed.on_delta(delta(1, vec![keyed(2, 0)], vec![])),
            Step::Show(ListUpdate::Snapshot(vec![keyed(1, 0), keyed(2, 0)]))
        );
        assert_eq!(
            feed.on_delta(delta(2, vec![keyed(1, 1)], vec![])),
            Step::Show(ListUpdate::Delta {
                upsert: vec![keyed(1, 1)],
                remove: vec![]
            })
        );
    }
}
