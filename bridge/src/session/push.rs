//! What a subscriber has been sent: the list and the other games' servers
//! go out when they changed since, never twice.

use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::Role;
use crate::{games::GamesSnapshot, upstream::ListSnapshot};

/// A browser's `bridgeSubscribe` state and the sequence numbers it has.
#[derive(Debug, Default)]
pub(crate) struct Subscription {
    on: bool,
    /// The list sequence number last pushed.
    list_seq: u64,
    /// The `bridgeGameServers` sequence number last pushed.
    games_seq: u64,
}

impl Subscription {
    /// `bridgeSubscribe`: the current list and games go out (again).
    pub(crate) fn start(&mut self) {
        *self = Self {
            on: true,
            ..Self::default()
        };
    }

    /// `bridgeUnsubscribe`.
    pub(crate) fn stop(&mut self) {
        self.on = false;
    }

    pub(crate) fn is_on(&self) -> bool {
        self.on
    }

    /// The list to push to a subscriber with `role`, unless it has it.
    pub(crate) fn list(&mut self, list: Option<&ListSnapshot>, role: Role) -> Option<Utf8Bytes> {
        let list = list.filter(|l| self.on && l.seq != self.list_seq)?;
        self.list_seq = list.seq;
        Some(role.pick(&list.full, &list.viewer))
    }

    /// The other games' servers to push, unless the subscriber has them.
    pub(crate) fn games(&mut self, games: Option<&GamesSnapshot>, role: Role) -> Option<Utf8Bytes> {
        let games = games.filter(|g| self.on && g.seq != self.games_seq)?;
        self.games_seq = games.seq;
        Some(role.pick(&games.full, &games.viewer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(seq: u64) -> ListSnapshot {
        ListSnapshot {
            seq,
            full: Utf8Bytes::from(format!("full {seq}")),
            viewer: Utf8Bytes::from(format!("viewer {seq}")),
        }
    }

    #[test]
    fn pushes_each_list_once_and_only_while_subscribed() {
        let mut sub = Subscription::default();
        assert_eq!(sub.list(Some(&list(1)), Role::Viewer), None);
        sub.start();
        assert_eq!(sub.list(None, Role::Viewer), None);
        assert_eq!(
            sub.list(Some(&list(1)), Role::Viewer).as_deref(),
            Some("viewer 1")
        );
        assert_eq!(sub.list(Some(&list(1)), Role::Viewer), None);
        assert_eq!(
            sub.list(Some(&list(2)), Role::Admin).as_deref(),
            Some("full 2")
        );
        // Subscribing again sends the current list again.
        sub.start();
        assert!(sub.list(Some(&list(2)), Role::Viewer).is_some());
        sub.stop();
        assert_eq!(sub.list(Some(&list(3)), Role::Viewer), None);
    }

    #[test]
    fn pushes_games_once() {
        let games = GamesSnapshot {
            seq: 4,
            full: Utf8Bytes::from_static("g full"),
            viewer: Utf8Bytes::from_static("g viewer"),
        };
        let mut sub = Subscription::default();
        assert_eq!(sub.games(Some(&games), Role::Admin), None);
        sub.start();
        assert_eq!(
            sub.games(Some(&games), Role::Admin).as_deref(),
            Some("g full")
        );
        assert_eq!(sub.games(Some(&games), Role::Admin), None);
    }
}
