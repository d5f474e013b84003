//! How the bridge publishes what every connection watches (the lobby list
//! from [`crate::live::upstream`], the other games' servers from
//! [`crate::live::games`]): one message in its two forms, admins' and viewers',
//! numbered, and sent on a `watch` channel only when its bytes changed, so
//! an unchanged list wakes nobody and a session can tell by the number
//! whether it has pushed it, in the two forms that
//! [`Visibility`] writes.

use std::sync::Arc;

use tokio::sync::watch;

use protocol::Addresses;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::{
    live::feed::FeedState,
    visibility::{Encoded, Visibility},
};

/// A published message and its number, which increases with every change
/// so a connection knows whether it has sent this one.
#[derive(Debug, Clone)]
pub struct Numbered {
    pub seq: u64,
    pub text: Text,
}

/// A published message's two forms: written when it was published, or
/// (the lobby list from a source that passes its changes on) written on
/// first use from the published list, so a change nobody reads whole
/// costs no whole list.
#[derive(Debug, Clone)]
pub enum Text {
    Written(Encoded),
    List(Arc<FeedState>),
}

impl Text {
    /// Both forms (the list's written now if not yet).
    pub fn forms(&self) -> &Encoded {
        match self {
            Text::Written(forms) => forms,
            Text::List(list) => list.plain(),
        }
    }

    /// Whether the admins' form is `full`. A list nobody has read whole
    /// yet is taken as different rather than written only to be compared
    /// (megabytes for a large list): publishing it again wakes only the
    /// plain subscribers, and there are none, or one would have read it.
    pub fn is(&self, full: &[u8]) -> bool {
        match self {
            Text::Written(forms) => forms.full.as_bytes() == full,
            Text::List(list) => list
                .plain_written()
                .is_some_and(|forms| forms.full.as_bytes() == full),
        }
    }
}

/// A watched state that carries a [`Numbered`] message; the [`Publisher`]
/// numbers it and decides when a change wakes the watchers.
pub trait Holds {
    /// The message last published, if any.
    fn numbered(&self) -> Option<&Numbered>;
    /// Where the next message goes.
    fn numbered_mut(&mut self) -> &mut Option<Numbered>;
}

impl Holds for Option<Numbered> {
    fn numbered(&self) -> Option<&Numbered> {
        self.as_ref()
    }

    fn numbered_mut(&mut self) -> &mut Option<Numbered> {
        self
    }
}

/// The sending side of a watched state `S`: publishes its snapshots
/// (see the module) and lets the owner change the rest of it.
#[derive(Debug)]
pub struct Publisher<S> {
    tx: watch::Sender<S>,
    visibility: Visibility,
}

impl<S: Holds> Publisher<S> {
    /// A publisher starting at `initial`, whose viewers' forms follow
    /// `visibility`.
    pub fn new(initial: S, visibility: Visibility) -> Self {
        let (tx, _) = watch::channel(initial);
        Self { tx, visibility }
    }

    /// A receiver for one connection; it starts at the current state.
    pub fn subscribe(&self) -> watch::Receiver<S> {
        self.tx.subscribe()
    }

    /// The current state, borrowed (publishing waits while it is held).
    pub fn borrow(&self) -> watch::Ref<'_, S> {
        self.tx.borrow()
    }

    /// Whether `full` is the admins' form last published: an offer of it
    /// can stop before decoding or encoding anything.
    pub fn is_current(&self, full: &[u8]) -> bool {
        self.tx.borrow().numbered().is_some_and(|s| s.text.is(full))
    }

    /// The two forms of a message (see [`Visibility::encode_as`]).
    pub fn encode<T: Into<Utf8Bytes>>(
        &self,
        full: impl Into<Utf8Bytes>,
        viewers: impl FnOnce(Addresses) -> T,
    ) -> Encoded {
        self.visibility.encode_as(full, viewers)
    }

    /// Publishes `text` under the next number, applying `also` in the same
    /// update (so watchers see both together). Text equal to the current
    /// one wakes nobody and `also` is not applied. Returns whether it was
    /// published.
    pub fn publish(&self, text: Encoded, also: impl FnOnce(&mut S)) -> bool {
        self.tx.send_if_modified(|state| {
            let slot = state.numbered_mut();
            if slot
                .as_ref()
                .is_some_and(|s| s.text.is(text.full.as_bytes()))
            {
                return false;
            }
            let seq = slot.as_ref().map_or(1, |s| s.seq + 1);
            *slot = Some(Numbered {
                seq,
                text: Text::Written(text),
            });
            also(state);
            true
        })
    }

    /// Publishes `text` under the next number, and `also` in the same
    /// update, without comparing it with the current text: for a message
    /// its publisher knows to have changed (a list whose change was not
    /// empty), whose text is written only if somebody reads it.
    pub fn publish_changed(&self, text: Text, also: impl FnOnce(&mut S)) {
        self.tx.send_modify(|state| {
            let slot = state.numbered_mut();
            let seq = slot.as_ref().map_or(1, |s| s.seq + 1);
            *slot = Some(Numbered { seq, text });
            also(state);
        });
    }

    /// Changes the rest of the state; watchers wake when `change` returns
    /// `true`.
    pub fn update(&self, change: impl FnOnce(&mut S) -> bool) -> bool {
        self.tx.send_if_modified(change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forms(publisher: &Publisher<Option<Numbered>>, full: &'static str) -> Encoded {
        publisher.encode(full, |viewers| {
            assert_eq!(viewers, Addresses::Hidden, "asked only for hidden viewers");
            format!("{full} hidden")
        })
    }

    #[test]
    fn numbers_changes_and_wakes_nobody_for_the_same_text() {
        let publisher = Publisher::new(None, Visibility::new(false));
        let mut rx = publisher.subscribe();
        assert!(publisher.publish(forms(&publisher, "a"), |_| {}));
        assert!(rx.has_changed().unwrap());
        assert_eq!(rx.borrow_and_update().as_ref().unwrap().seq, 1);
        assert!(publisher.is_current(b"a"));
        assert!(!publisher.publish(forms(&publisher, "a"), |_| panic!("not applied")));
        assert!(!rx.has_changed().unwrap(), "unchanged text wakes nobody");
        assert!(publisher.publish(forms(&publisher, "b"), |_| {}));
        let now = rx.borrow_and_update().clone().unwrap();
        assert_eq!((now.seq, now.text.forms().full.as_str()), (2, "b"));
        assert_eq!(now.text.forms().viewer.as_str(), "b", "addresses are shown");
    }

    #[test]
    fn hides_addresses_only_in_the_viewers_form() {
        let publisher = Publisher::new(None, Visibility::new(true));
        let text = forms(&publisher, "a");
        assert_eq!(text.for_role(true).as_str(), "a");
        assert_eq!(text.for_role(false).as_str(), "a hidden");
        // Not encoded at all when addresses are shown.
        let shown = Visibility::new(false).encode_as("a", |_| -> String { panic!("not encoded") });
        assert_eq!(shown.viewer.as_str(), "a");
    }
}
