//! Where the page's list stands in the bridge's numbering, as the
//! connection needs it: the `epoch` and `seq` a new socket subscribes from
//! (`docs/protocol.md` §3). The page's store of the list
//! (`list::store`) is the only record of it; the connection asks the
//! store each time it subscribes, so the two cannot disagree.

use std::rc::Rc;

use protocol::{
    bridge::ClientMessage,
    delta::{Resume, Subscribe},
};

/// The connection's way to the list's position: a question to the page's
/// store, never a copy of the answer.
#[derive(Clone)]
pub struct Cursor(Rc<dyn Fn() -> Option<Resume>>);

impl Cursor {
    /// A cursor that asks `position` (the store's `resume`) where the list
    /// stands.
    pub fn new(position: impl Fn() -> Option<Resume> + 'static) -> Self {
        Cursor(Rc::new(position))
    }

    /// The `bridgeSubscribe` to send on a new socket (and when the page
    /// asks to subscribe again): deltas, continuing from where the list
    /// stands now.
    pub fn subscribe_json(&self) -> String {
        ClientMessage::Subscribe(Subscribe::deltas((self.0)())).to_json()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    #[test]
    fn subscribes_from_where_the_list_stands_when_asked() {
        let at = Rc::new(RefCell::new(None));
        let cursor = Cursor::new({
            let at = at.clone();
            move || at.borrow().clone()
        });
        assert_eq!(
            cursor.subscribe_json(),
            r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#
        );
        // The list moved on: the next subscribe says so, nothing to follow.
        *at.borrow_mut() = Some(Resume {
            epoch: "e".into(),
            since: 6,
        });
        assert_eq!(
            cursor.subscribe_json(),
            r#"{"command":"bridgeSubscribe","content":{"deltas":true,"epoch":"e","since":6}}"#
        );
    }
}
