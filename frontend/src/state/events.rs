//! What the page's own connection does to the page state: a pure mapping
//! from each [`ConnEvent`] to the [`Action`]s the lobby reducer gets and the
//! sign-in frame to send, so `LobbyProvider` (`contexts::lobby`) is glue
//! and the rules are tested natively (like `services::connection::polling`).

use protocol::bridge::{ClientMessage, ErrorCode, MasterState};

use super::Action;
use crate::services::connection::{decode::Incoming, ConnEvent};

/// The page's answer to one connection event: actions to dispatch, in
/// order, then a frame to send (the sign-in when the socket opens).
#[derive(Debug, Default, PartialEq)]
pub struct Reaction {
    pub actions: Vec<Action>,
    pub send: Option<ClientMessage>,
}

/// Maps `ev` at wall-clock `now_ms`. `token` is asked only when the socket
/// opens: the tab's admin token, if the page may send it to this bridge
/// (never to a bridge a link named), so a reconnect signs in again.
pub fn react(ev: ConnEvent, now_ms: f64, token: impl FnOnce() -> Option<String>) -> Reaction {
    let action = |a: Action| Reaction {
        actions: vec![a],
        send: None,
    };
    match ev {
        ConnEvent::Connecting => action(Action::Connecting),
        // The connection subscribes to the list by itself.
        ConnEvent::Opened => match token() {
            Some(token) => Reaction {
                actions: vec![Action::Opened, Action::AuthPending],
                send: Some(ClientMessage::Auth { token }),
            },
            None => action(Action::Opened),
        },
        ConnEvent::Polling => action(Action::Polling),
        ConnEvent::PushesResumed => action(Action::PushesResumed),
        ConnEvent::Closed { retry_at_ms } => action(Action::Closed { at_ms: retry_at_ms }),
        ConnEvent::List { message, perf_ms } => action(Action::List {
            message,
            at_ms: now_ms,
            perf_ms,
        }),
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
                    send: None,
                }
            }
            // Lists come as `ConnEvent::List`.
            Incoming::List(_) | Incoming::Snapshot(_) | Incoming::Delta(_) | Incoming::Other(_) => {
                Reaction::default()
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::connection::ListMessage;

    fn no_token() -> Option<String> {
        None
    }

    fn message(msg: Incoming) -> ConnEvent {
        ConnEvent::Message { msg, perf_ms: 1.0 }
    }

    #[test]
    fn opening_signs_in_only_with_a_token() {
        let r = react(ConnEvent::Opened, 0.0, || Some("t\"k".into()));
        assert_eq!(r.actions, [Action::Opened, Action::AuthPending]);
        assert_eq!(
            r.send.map(|m| m.to_json()).as_deref(),
            Some(r#"{"command":"bridgeAuth","content":{"token":"t\"k"}}"#)
        );
        let r = react(ConnEvent::Opened, 0.0, no_token);
        assert_eq!(r.actions, [Action::Opened]);
        assert_eq!(r.send, None);
    }

    #[test]
    fn the_token_is_read_only_when_the_socket_opens() {
        let asked = |ev| {
            let mut asked = false;
            react(ev, 0.0, || {
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
        let one = |ev| react(ev, 0.0, no_token).actions;
        assert_eq!(one(ConnEvent::Connecting), [Action::Connecting]);
        assert_eq!(one(ConnEvent::Polling), [Action::Polling]);
        assert_eq!(one(ConnEvent::PushesResumed), [Action::PushesResumed]);
        assert_eq!(
            one(ConnEvent::Closed { retry_at_ms: 9.0 }),
            [Action::Closed { at_ms: 9.0 }]
        );
    }

    #[test]
    fn lists_and_games_carry_the_wall_clock() {
        let r = react(
            ConnEvent::List {
                message: ListMessage::Whole(vec![]),
                perf_ms: 5.0,
            },
            1234.0,
            no_token,
        );
        assert_eq!(
            r.actions,
            [Action::List {
                message: ListMessage::Whole(vec![]),
                at_ms: 1234.0,
                perf_ms: 5.0,
            }]
        );
        let games = protocol::bridge::GameServers::default();
        let r = react(message(Incoming::Games(games.clone())), 77.0, no_token);
        assert_eq!(r.actions, [Action::Games { games, at_ms: 77.0 }]);
    }

    #[test]
    fn messages() {
        let one = |msg| react(message(msg), 0.0, no_token).actions;
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
