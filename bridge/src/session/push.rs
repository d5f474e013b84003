//! What a subscriber has been sent: the list and the other games' servers
//! are both [`Snapshot`]s and go out through one check, when they changed
//! since, never twice. A delta subscriber
//! (`docs/protocol.md` §3) gets the deltas it lacks instead of lists.

use std::sync::Arc;

use protocol::delta::{Resume, Subscribe};
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::Role;
use crate::{feed::FeedState, publish::Snapshot};

/// What a subscriber is pushed as whole snapshots.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
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

impl Subscription {
    /// `bridgeSubscribe`: the current list and games go out (again); with
    /// deltas, the answer follows the subscribe's `epoch`/`since`.
    pub(crate) fn start(&mut self, sub: Subscribe) {
        *self = Self {
            on: true,
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
        list: Option<&Snapshot>,
        feed: Option<&Arc<FeedState>>,
        role: Role,
    ) -> Vec<Utf8Bytes> {
        if !self.on {
            return Vec::new();
        }
        let Some(position) = self.deltas.as_mut() else {
            return self.fresh(Source::List, list, role).into_iter().collect();
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

    /// `snapshot` of `source` in `role`'s form, unless the subscriber has
    /// it or is not subscribed.
    pub(crate) fn fresh(
        &mut self,
        source: Source,
        snapshot: Option<&Snapshot>,
        role: Role,
    ) -> Option<Utf8Bytes> {
        let sent = match source {
            Source::List => &mut self.list_seq,
            Source::Games => &mut self.games_seq,
        };
        let snapshot = snapshot.filter(|s| self.on && s.seq != *sent)?;
        *sent = snapshot.seq;
        Some(role.pick(&snapshot.text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(seq: u64, what: &str) -> Snapshot {
        Snapshot {
            seq,
            text: crate::publish::Visibility::new(true)
                .encode_as(format!("{what} full {seq}"), || {
                    format!("{what} viewer {seq}")
                }),
        }
    }

    fn list(seq: u64) -> Snapshot {
        snapshot(seq, "list")
    }

    #[test]
    fn pushes_each_list_once_and_only_while_subscribed() {
        use Source::List;
        let mut sub = Subscription::default();
        assert_eq!(sub.fresh(List, Some(&list(1)), Role::Viewer), None);
        sub.start(Subscribe::whole_lists());
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
        sub.start(Subscribe::whole_lists());
        assert!(sub.fresh(List, Some(&list(2)), Role::Viewer).is_some());
        sub.stop();
        assert_eq!(sub.fresh(List, Some(&list(3)), Role::Viewer), None);
    }

    #[test]
    fn delta_subscribers_get_what_they_lack() {
        use crate::feed::Feed;
        use protocol::{ServerEntry, Stats};
        let entry = |n: u32| ServerEntry {
            name: "s".into(),
            address: Some("192.0.2.1".into()),
            port: Some(1),
            stats: Stats {
                players: protocol::Players { current: n, max: 4 },
                ..Stats::default()
            },
        };
        let mut feed = Feed::new("e", crate::publish::Visibility::new(false));
        let one = feed.publish(vec![entry(1)]);
        let mut sub = Subscription::default();
        sub.start(Subscribe::deltas(None));
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
        sub.start(Subscribe::whole_lists());
        assert_eq!(
            sub.lists(Some(&list(7)), three.as_ref(), Role::Viewer),
            ["list viewer 7"]
        );
    }

    #[test]
    fn pushes_games_once_apart_from_the_list() {
        let games = snapshot(4, "games");
        let mut sub = Subscription::default();
        assert_eq!(sub.fresh(Source::Games, Some(&games), Role::Admin), None);
        sub.start(Subscribe::whole_lists());
        // The list with the same number does not count as the games sent.
        assert!(sub
            .fresh(Source::List, Some(&list(4)), Role::Admin)
            .is_some());
        assert_eq!(
            sub.fresh(Source::Games, Some(&games), Role::Admin)
                .as_deref(),
            Some("games full 4")
        );
        assert_eq!(sub.fresh(Source::Games, Some(&games), Role::Admin), None);
    }
}
