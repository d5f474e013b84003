//! What the page's own connection does to the page state: a mapping from
//! each [`ConnEvent`] to the [`Action`]s the lobby reducer gets, the
//! sign-in frame to send and whether to subscribe again, so
//! `LobbyProvider` (`contexts::lobby`) is glue and the rules are tested
//! natively (like `services::connection::polling`).

use protocol::bridge::{ClientMessage, ErrorCode, MasterState};

use super::Action;
use crate::{
    list::store::{Applied, LobbyStore},
    services::connection::{decode::Incoming, ConnEvent, ListMessage},
};

/// The page's answer to one connection event: actions to dispatch, in
/// order, then a frame to send (the sign-in when the socket opens), and
/// whether the connection is to subscribe to the list again.
#[derive(Debug, Default, PartialEq)]
pub struct Reaction {
    pub actions: Vec<Action>,
    pub send: Option<ClientMessage>,
    /// A list message did not apply: subscribe again from where the list
    /// stands ([`LobbyStore::resume`]).
    pub resubscribe: bool,
}

/// Maps `ev` at wall-clock `now_ms`; a list message is applied to `store`,
/// the page's one store of the list. `token` is asked only when the socket
/// opens: the tab's admin token, if the page may send it to this bridge
/// (never to a bridge a link named), so a reconnect signs in again.
pub fn react(
    ev: ConnEvent,
    now_ms: f64,
    store: &mut LobbyStore,
    token: impl FnOnce() -> Option<String>,
) -> Reaction {
    let action = |a: Action| Reaction {
        actions: vec![a],
        ..Reaction::default()
    };
    match ev {
        ConnEvent::Connecting => action(Action::Connecting),
        // The connection subscribes to the list by itself.
        ConnEvent::Opened => match token() {
            Some(token) => Reaction {
                actions: vec![Action::Opened, Action::AuthPending],
                send: Some(ClientMessage::Auth { token }),
                resubscribe: false,
            },
            None => action(Action::Opened),
        },
        ConnEvent::Polling => action(Action::Polling),
        ConnEvent::PushesResumed => action(Action::PushesResumed),
        ConnEvent::Closed { retry_at_ms } => action(Action::Closed { at_ms: retry_at_ms }),
        ConnEvent::List { message, perf_ms } => match receive(store, message, now_ms, perf_ms) {
            Some(a) => action(a),
            // Nothing shown: the list is not vouched for.
            None => Reaction {
                resubscribe: true,
                ..Reaction::default()
            },
        },
        ConnEvent::Message { msg, .. } => match msg {
            Incoming::AuthResult(ok) => action(Action::AuthResult(ok)),
            Incoming::Master(m) => action(Action::Master(m)),
            Incoming::Games(games) => action(Action::Games {
                games,
                at_ms: now_ms,
            }),
            Incoming::Error { code, message } => {
                let mut actions = Vec::with_capacity(2);
                // A refusal for the master's sake says it is down.
                if code == Some(ErrorCode::MasterDown) {
                    actions.push(Action::Master(MasterState::Down));
                }
                actions.push(Action::BridgeError(message));
                Reaction {
                    actions,
                    ..Reaction::default()
                }
            }
            // Lists come as `ConnEvent::List`.
            Incoming::List(_) | Incoming::Other(_) => Reaction::default(),
        },
    }
}

/// Applies a list message, arrived at `at_ms` (wall clock) and `perf_ms`
/// (`performance.now()`), to `store`: the action that shows the store as
/// it is then, or `None` when the message did not apply (and changed
/// nothing), so the connection is to subscribe again.
pub fn receive(
    store: &mut LobbyStore,
    message: ListMessage,
    at_ms: f64,
    perf_ms: f64,
) -> Option<Action> {
    match store.apply(message) {
        Applied::Resubscribe => None,
        Applied::Changed | Applied::Current => Some(Action::List {
            list: store.clone(),
            at_ms,
            perf_ms,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_token() -> Option<String> {
        None
    }

    fn message(msg: Incoming) -> ConnEvent {
        ConnEvent::Message { msg, perf_ms: 1.0 }
    }

    #[test]
    fn opening_signs_in_only_with_a_token() {
        let r = react(ConnEvent::Opened, 0.0, &mut LobbyStore::default(), || {
            Some("t\"k".into())
        });
        assert_eq!(r.actions, [Action::Opened, Action::AuthPending]);
        assert_eq!(
            r.send.map(|m| m.to_json()).as_deref(),
            Some(r#"{"command":"bridgeAuth","content":{"token":"t\"k"}}"#)
        );
        let r = react(ConnEvent::Opened, 0.0, &mut LobbyStore::default(), no_token);
        assert_eq!(r.actions, [Action::Opened]);
        assert_eq!(r.send, None);
    }

    #[test]
    fn the_token_is_read_only_when_the_socket_opens() {
        let asked = |ev| {
            let mut asked = false;
            react(ev, 0.0, &mut LobbyStore::default(), || {
                asked = true;
                None
            });
            asked
        };
        assert!(asked(ConnEvent::Opened));
        assert!(!asked(ConnEvent::Connecting));
        assert!(!asked(message(Incoming::AuthResult(true))));
    }

    #[test]
    fn connection_changes() {
        let one = |ev| react(ev, 0.0, &mut LobbyStore::default(), no_token).actions;
        assert_eq!(one(ConnEvent::Connecting), [Action::Connecting]);
        assert_eq!(one(ConnEvent::Polling), [Action::Polling]);
        assert_eq!(one(ConnEvent::PushesResumed), [Action::PushesResumed]);
        assert_eq!(
            one(ConnEvent::Closed { retry_at_ms: 9.0 }),
            [Action::Closed { at_ms: 9.0 }]
        );
    }

    #[test]
    fn a_list_message_that_does_not_apply_asks_to_subscribe_again() {
        let mut store = LobbyStore::default();
        // A delta before any snapshot: it went missing.
        let ev = ConnEvent::List {
            message: crate::list::store::tests::delta(3, vec![], vec![]),
            perf_ms: 5.0,
        };
        let r = react(ev, 0.0, &mut store, no_token);
        assert!(r.resubscribe);
        assert_eq!((r.actions, r.send), (vec![], None));
        assert_eq!(store.version(), 0, "nothing changed");
        let ev = ConnEvent::List {
            message: ListMessage::Whole(vec![]),
            perf_ms: 5.0,
        };
        assert!(!react(ev, 0.0, &mut store, no_token).resubscribe);
    }

    #[test]
    fn lists_and_games_carry_the_wall_clock() {
        let mut store = LobbyStore::default();
        let r = react(
            ConnEvent::List {
                message: ListMessage::Whole(vec![]),
                perf_ms: 5.0,
            },
            1234.0,
            &mut store,
            no_token,
        );
        assert_eq!(
            r.actions,
            [Action::List {
                list: store,
                at_ms: 1234.0,
                perf_ms: 5.0,
            }]
        );
        let games = protocol::bridge::GameServers::default();
        let r = react(
            message(Incoming::Games(games.clone())),
            77.0,
            &mut LobbyStore::default(),
            no_token,
        );
        assert_eq!(r.actions, [Action::Games { games, at_ms: 77.0 }]);
    }

    #[test]
    fn messages() {
        let one = |msg| react(message(msg), 0.0, &mut LobbyStore::default(), no_token).actions;
        assert_eq!(
            one(Incoming::AuthResult(false)),
            [Action::AuthResult(false)]
        );
        assert_eq!(
            one(Incoming::Master(MasterState::Up)),
            [Action::Master(MasterState::Up)]
        );
        assert_eq!(
            one(Incoming::Error {
                code: Some(ErrorCode::MasterDown),
                message: "master down".into()
            }),
            [
                Action::Master(MasterState::Down),
                Action::BridgeError("master down".into())
            ]
        );
        assert_eq!(
            one(Incoming::Error {
                code: None,
                message: "slow down".into()
            }),
            [Action::BridgeError("slow down".into())]
        );
    }
}
