//! What a subscriber has been sent: the list and the other games' servers
//! are both [`Numbered`] messages and go out through one check, when they changed
//! since, never twice. A delta subscriber
//! (`docs/protocol.md` §3) gets the deltas it lacks instead of lists.
//! Which `bridgeSubscribe` costs a whole list (or a catch-up), and which is
//! only confirmed, is decided here too ([`Answer`]).

use std::sync::Arc;

use protocol::delta::{Resume, Subscribe};
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::Role;
use crate::live::{feed::FeedState, publish::Numbered};

/// What a subscriber is pushed as whole snapshots.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pushed {
    /// The lobby list (`msRQueryGameServers`), for plain subscribers.
    List,
    /// Other games' servers (`bridgeGameServers`).
    Games,
}

/// A browser's `bridgeSubscribe` state and the sequence numbers it has.
#[derive(Debug, Default)]
pub(crate) struct Subscription {
    on: bool,
    /// The list sequence number last pushed.
    list_seq: u64,
    /// The `bridgeGameServers` sequence number last pushed.
    games_seq: u64,
    /// Delta subscribers only: where they stand in the feed.
    deltas: Option<DeltaPosition>,
}

/// A delta subscriber's position: O(1) per viewer, whatever the list size.
#[derive(Debug)]
struct DeltaPosition {
    /// The list it holds (epoch and seq), once it was sent one.
    sent: Option<(Arc<str>, u64)>,
    /// Before its first answer: the list its subscribe asked to continue.
    resume: Option<Resume>,
}

/// What a `bridgeSubscribe` costs the bridge to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// It changes nothing: a plain subscriber subscribing again, or a delta
    /// subscribe naming the newest list. Confirmed, the list not sent again.
    Confirm,
    /// No list is published yet: nothing to send until there is one.
    Nothing,
    /// The whole list (plain) or a snapshot or the deltas since `since`:
    /// megabytes, or as many, so at most one per interval per socket.
    Lists,
}

impl Subscription {
    /// How `sub` is answered, given the newest list and feed.
    pub(crate) fn answer(
        &self,
        sub: &Subscribe,
        list: Option<&Numbered>,
        feed: Option<&Arc<FeedState>>,
    ) -> Answer {
        if !sub.deltas {
            return if self.on && self.deltas.is_none() {
                Answer::Confirm
            } else if list.is_some() {
                Answer::Lists
            } else {
                Answer::Nothing
            };
        }
        let Some(state) = feed else {
            return Answer::Nothing;
        };
        match &sub.resume {
            Some(r) if r.epoch == *state.epoch && r.since == state.seq => Answer::Confirm,
            // A subscribe without `since` asks for a snapshot even from a
            // subscriber that has the list: it may have lost it.
            _ => Answer::Lists,
        }
    }

    /// `bridgeSubscribe`: the current list goes out (again); with deltas,
    /// the answer follows the subscribe's `epoch`/`since`. The other games'
    /// servers go out only if this socket lacks the current ones, unless
    /// `resend_games` (an answer with the whole list brings them too).
    pub(crate) fn start(&mut self, sub: Subscribe, resend_games: bool) {
        *self = Self {
            on: true,
            games_seq: if resend_games { 0 } else { self.games_seq },
            deltas: sub.deltas.then_some(DeltaPosition {
                sent: None,
                resume: sub.resume,
            }),
            ..Self::default()
        };
    }

    /// The role changed (an admin signed in): a delta subscriber's entries
    /// lack the addresses it may now see, so it gets a snapshot next.
    pub(crate) fn role_changed(&mut self) {
        if let Some(d) = self.deltas.as_mut() {
            d.sent = None;
            d.resume = None;
        }
    }

    /// What brings a subscriber to the newest list: the whole list (plain
    /// subscribers), or the deltas it lacks — shared texts, encoded once
    /// for everyone — or a snapshot when they are gone. Empty when it has
    /// the newest list already.
    pub(crate) fn lists(
        &mut self,
        list: Option<&Numbered>,
        feed: Option<&Arc<FeedState>>,
        role: Role,
    ) -> Vec<Utf8Bytes> {
        if !self.on {
            return Vec::new();
        }
        let Some(position) = self.deltas.as_mut() else {
            return self.fresh(Pushed::List, list, role).into_iter().collect();
        };
        let Some(state) = feed else {
            return Vec::new();
        };
        let admin = role == Role::Admin;
        let texts = match &position.sent {
            Some((epoch, seq)) if *epoch == state.epoch => {
                if *seq == state.seq {
                    return Vec::new();
                }
                state.after(*seq, admin)
            }
            _ => state.catch_up(position.resume.take().as_ref(), admin),
        };
        position.sent = Some((state.epoch.clone(), state.seq));
        texts
    }

    /// `bridgeUnsubscribe`.
    pub(crate) fn stop(&mut self) {
        self.on = false;
    }

    pub(crate) fn is_on(&self) -> bool {
        self.on
    }

    /// `snapshot` of `pushed` in `role`'s form, unless the subscriber has
    /// it or is not subscribed.
    pub(crate) fn fresh(
        &mut self,
        pushed: Pushed,
        snapshot: Option<&Numbered>,
        role: Role,
    ) -> Option<Utf8Bytes> {
        let sent = match pushed {
            Pushed::List => &mut self.list_seq,
            Pushed::Games => &mut self.games_seq,
        };
        let snapshot = snapshot.filter(|s| self.on && s.seq != *sent)?;
        *sent = snapshot.seq;
        Some(role.pick(snapshot.text.forms()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(seq: u64, what: &str) -> Numbered {
        Numbered {
            seq,
            text: crate::live::publish::Text::Written(
                crate::visibility::Visibility::new(true)
                    .encode_as(format!("{what} full {seq}"), |_| {
                        format!("{what} viewer {seq}")
                    }),
            ),
        }
    }

    fn list(seq: u64) -> Numbered {
        snapshot(seq, "list")
    }

    #[test]
    fn pushes_each_list_once_and_only_while_subscribed() {
        use Pushed::List;
        let mut sub = Subscription::default();
        assert_eq!(sub.fresh(List, Some(&list(1)), Role::Viewer), None);
        sub.start(Subscribe::whole_lists(), true);
        assert_eq!(sub.fresh(List, None, Role::Viewer), None);
        assert_eq!(
            sub.fresh(List, Some(&list(1)), Role::Viewer).as_deref(),
            Some("list viewer 1")
        );
        assert_eq!(sub.fresh(List, Some(&list(1)), Role::Viewer), None);
        assert_eq!(
            sub.fresh(List, Some(&list(2)), Role::Admin).as_deref(),
            Some("list full 2")
        );
        // Subscribing again sends the current list again.
        sub.start(Subscribe::whole_lists(), true);
        assert!(sub.fresh(List, Some(&list(2)), Role::Viewer).is_some());
        sub.stop();
        assert_eq!(sub.fresh(List, Some(&list(3)), Role::Viewer), None);
    }

    #[test]
    fn delta_subscribers_get_what_they_lack() {
        use crate::live::feed::Feed;
        use protocol::{ServerEntry, Stats};
        let entry = |n: u32| ServerEntry {
            registrant: None,
            name: "s".into(),
            address: Some("192.0.2.1".into()),
            port: Some(1),
            stats: Stats {
                players: protocol::Players { current: n, max: 4 },
                ..Stats::default()
            },
        };
        let mut feed = Feed::new(
            "e",
            crate::visibility::Visibility::new(false),
            crate::live::keys::Keys::from_secret(b"test"),
        );
        let one = feed.publish(vec![entry(1)]);
        let mut sub = Subscription::default();
        sub.start(Subscribe::deltas(None), true);
        let texts = sub.lists(None, one.as_ref(), Role::Viewer);
        assert_eq!(texts.len(), 1);
        assert!(texts[0].as_str().contains("bridgeSnapshot"));
        assert!(
            sub.lists(None, one.as_ref(), Role::Viewer).is_empty(),
            "once"
        );
        let _two = feed.publish(vec![entry(2)]);
        let three = feed.publish(vec![entry(3)]);
        let texts = sub.lists(None, three.as_ref(), Role::Viewer);
        assert_eq!(texts.len(), 2, "both deltas it missed");
        assert!(texts.iter().all(|t| t.as_str().contains("bridgeDelta")));
        // Signing in as admin: a snapshot next.
        sub.role_changed();
        let texts = sub.lists(None, three.as_ref(), Role::Admin);
        assert!(texts[0].as_str().contains("bridgeSnapshot"));
        // Plain subscribers get whole lists, and never deltas.
        sub.start(Subscribe::whole_lists(), true);
        assert_eq!(
            sub.lists(Some(&list(7)), three.as_ref(), Role::Viewer),
            ["list viewer 7"]
        );
    }

    #[test]
    fn pushes_games_once_apart_from_the_list() {
        let games = snapshot(4, "games");
        let mut sub = Subscription::default();
        assert_eq!(sub.fresh(Pushed::Games, Some(&games), Role::Admin), None);
        sub.start(Subscribe::whole_lists(), true);
        // The list with the same number does not count as the games sent.
        assert!(sub
            .fresh(Pushed::List, Some(&list(4)), Role::Admin)
            .is_some());
        assert_eq!(
            sub.fresh(Pushed::Games, Some(&games), Role::Admin)
                .as_deref(),
            Some("games full 4")
        );
        assert_eq!(sub.fresh(Pushed::Games, Some(&games), Role::Admin), None);
    }

    #[test]
    fn only_subscribes_that_change_something_cost_a_list() {
        use crate::live::feed::Feed;
        use protocol::delta::Resume;
        let resume = |epoch: &str, since| {
            Some(Resume {
                epoch: epoch.into(),
                since,
            })
        };
        let mut feed = Feed::new(
            "e",
            crate::visibility::Visibility::new(false),
            crate::live::keys::Keys::from_secret(b"test"),
        );
        let _one = feed.publish(vec![]);
        let two = feed.publish(vec![protocol::ServerEntry {
            registrant: None,
            name: "s".into(),
            address: None,
            port: None,
            stats: protocol::Stats::default(),
        }]);
        let two = two.as_ref();
        let plain = Subscribe::whole_lists();
        let mut sub = Subscription::default();
        // Before any list: nothing to send either way.
        assert_eq!(sub.answer(&plain, None, None), Answer::Nothing);
        assert_eq!(
            sub.answer(&Subscribe::deltas(None), None, None),
            Answer::Nothing
        );
        // The first plain subscribe costs the list; the same again does not.
        assert_eq!(sub.answer(&plain, Some(&list(2)), two), Answer::Lists);
        sub.start(plain.clone(), true);
        assert_eq!(sub.answer(&plain, Some(&list(2)), two), Answer::Confirm);
        // Deltas: naming the newest list is a confirmation; without `since`,
        // an older one or another epoch, a catch-up or a snapshot.
        let current = Subscribe::deltas(resume("e", 2));
        assert_eq!(sub.answer(&current, Some(&list(2)), two), Answer::Confirm);
        for other in [
            Subscribe::deltas(None),
            Subscribe::deltas(resume("e", 1)),
            Subscribe::deltas(resume("x", 2)),
        ] {
            assert_eq!(sub.answer(&other, Some(&list(2)), two), Answer::Lists);
        }
        // After an unsubscribe a plain subscribe costs the list again.
        sub.stop();
        assert_eq!(sub.answer(&plain, Some(&list(2)), two), Answer::Lists);
    }

    #[test]
    fn a_confirmed_subscribe_does_not_send_the_games_again() {
        let games = snapshot(4, "games");
        let mut sub = Subscription::default();
        sub.start(Subscribe::whole_lists(), true);
        assert!(sub
            .fresh(Pushed::Games, Some(&games), Role::Viewer)
            .is_some());
        sub.start(Subscribe::deltas(None), false);
        assert_eq!(sub.fresh(Pushed::Games, Some(&games), Role::Viewer), None);
        // New games go out, and an answer with the whole list brings them.
        let newer = snapshot(5, "games");
        assert!(sub
            .fresh(Pushed::Games, Some(&newer), Role::Viewer)
            .is_some());
        sub.start(Subscribe::whole_lists(), true);
        assert!(sub
            .fresh(Pushed::Games, Some(&newer), Role::Viewer)
            .is_some());
    }
}
