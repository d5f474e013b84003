//! Where the page's list stands in the bridge's numbering, as the
//! connection follows it: the `epoch` and `seq` a new socket subscribes
//! from (`docs/protocol.md` §3). The list itself is the page's
//! (`listing::store`); this is only its bookmark, moved on by the list
//! messages the connection hands over, and set back by the page when one
//! of them did not apply. A pure state machine, tested natively.

use protocol::{
    bridge::ClientMessage,
    delta::{Resume, Subscribe},
};

use super::ListMessage;

/// The bookmark of the list a connection follows across its sockets.
#[derive(Debug, Default)]
pub struct Cursor {
    at: Option<Resume>,
}

impl Cursor {
    /// The `bridgeSubscribe` to send on a new socket (and when the page
    /// asks to subscribe again): deltas, continuing from the bookmark.
    pub fn subscribe_json(&self) -> String {
        ClientMessage::Subscribe(Subscribe::deltas(self.at.clone())).to_json()
    }

    /// Moves on with a list message handed to the page: a snapshot sets
    /// the bookmark, a delta that continues it moves it (one that does not
    /// will not apply to the page's list either). Whole lists have no
    /// place in the numbering.
    pub fn follow(&mut self, message: &ListMessage) {
        match message {
            ListMessage::Snapshot(s) => {
                self.at = Some(Resume {
                    epoch: s.epoch.clone(),
                    since: s.seq,
                });
            }
            ListMessage::Delta(d) => {
                if let Some(at) = self.at.as_mut().filter(|at| at.epoch == d.epoch) {
                    if at.since == d.prev {
                        at.since = d.seq;
                    }
                }
            }
            ListMessage::Whole(_) => {}
        }
    }

    /// The page's list says where it stands (after a message that did not
    /// apply to it).
    pub fn reset(&mut self, at: Option<Resume>) {
        self.at = at;
    }
}

#[cfg(test)]
mod tests {
    use protocol::delta::{Delta, Snapshot};

    use super::*;

    fn snapshot(seq: u64) -> ListMessage {
        ListMessage::Snapshot(Snapshot {
            epoch: "e".into(),
            seq,
            servers: vec![],
        })
    }

    fn delta(epoch: &str, prev: u64) -> ListMessage {
        ListMessage::Delta(Delta {
            epoch: epoch.into(),
            seq: prev + 1,
            prev,
            upsert: vec![],
            remove: vec![],
        })
    }

    const FRESH: &str = r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#;

    fn from(seq: u64) -> String {
        format!(
            r#"{{"command":"bridgeSubscribe","content":{{"deltas":true,"epoch":"e","since":{seq}}}}}"#
        )
    }

    #[test]
    fn subscribes_from_where_the_list_stands() {
        let mut cursor = Cursor::default();
        assert_eq!(cursor.subscribe_json(), FRESH);
        // A delta without a snapshot has nothing to continue.
        cursor.follow(&delta("e", 0));
        assert_eq!(cursor.subscribe_json(), FRESH);
        cursor.follow(&snapshot(4));
        assert_eq!(cursor.subscribe_json(), from(4));
        cursor.follow(&delta("e", 4));
        cursor.follow(&delta("e", 5));
        assert_eq!(cursor.subscribe_json(), from(6));
        // A gap, another epoch, old news and whole lists leave it.
        for message in [
            delta("e", 9),
            delta("other", 6),
            delta("e", 2),
            ListMessage::Whole(vec![]),
        ] {
            cursor.follow(&message);
            assert_eq!(cursor.subscribe_json(), from(6), "{message:?}");
        }
        // The page's list did not take a delta: back to where it stands.
        cursor.reset(Some(Resume {
            epoch: "e".into(),
            since: 5,
        }));
        assert_eq!(cursor.subscribe_json(), from(5));
        cursor.reset(None);
        assert_eq!(cursor.subscribe_json(), FRESH);
    }
}
