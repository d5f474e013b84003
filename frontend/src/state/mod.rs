//! The page's shared state (connection, master reachability, the list,
//! admin sign-in) as `State` + `Action` + `impl Reducible`, so every change
//! goes through one pure function that is tested natively; `events` says
//! which actions each event of the page's connection becomes.

pub mod events;

use std::rc::Rc;

use protocol::bridge::{GameServers, MasterState};
use yew::Reducible;

use crate::list::store::LobbyStore;

/// The bridge connection as the status pill describes it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Conn {
    /// Opening a socket (the first time or after a wait).
    #[default]
    Connecting,
    /// The socket is open.
    Open,
    /// The socket closed; the next attempt starts at `at_ms` (Date.now()).
    Waiting { at_ms: f64 },
}

/// The result of `bridgeAuth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Auth {
    #[default]
    SignedOut,
    Pending,
    SignedIn,
    Rejected,
}

/// Everything components read from the lobby context.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct State {
    pub conn: Conn,
    pub master: Option<MasterState>,
    /// A list arrived on the current connection.
    pub receiving: bool,
    /// Pushes did not arrive in time, so the connection polls.
    pub polling: bool,
    /// The lobby's list: the one store of its entries, and the rows shown.
    pub list: LobbyStore,
    /// When a list last arrived (wall clock, for "N s ago").
    pub received_at_ms: Option<f64>,
    /// When the rows last changed (`performance.now()` of the list's
    /// arrival): only a list that arrived after a test server's
    /// registration went out can confirm it.
    pub received_perf_ms: f64,
    pub auth: Auth,
    /// The last `bridgeError` message, shown until the next list.
    pub last_error: Option<String>,
    /// Other games' servers (`bridgeGameServers`); `None` until the bridge
    /// sends them, which it only does when sources are configured.
    pub games: Option<Rc<GameServers>>,
    /// Incremented with every `bridgeGameServers`, for memos.
    pub games_version: u32,
    /// When the games arrived (wall clock, for "N s ago").
    pub games_at_ms: Option<f64>,
}

impl State {
    /// Whether the connection that brought the data shown is gone and no
    /// list came on a new one yet (data shown then may be out of date).
    pub fn disconnected(&self) -> bool {
        matches!(self.conn, Conn::Waiting { .. }) || !self.receiving
    }
}

/// Everything that changes the state.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Connecting,
    Opened,
    /// The socket closed; retrying at `at_ms`.
    Closed {
        at_ms: f64,
    },
    Polling,
    /// A push arrived while polling; polling stopped.
    PushesResumed,
    /// A lobby list message applied to the store (`events::receive`),
    /// arrived at `at_ms` (wall clock) and `perf_ms` (`performance.now()`):
    /// the store as it is after it.
    List {
        list: LobbyStore,
        at_ms: f64,
        perf_ms: f64,
    },
    Master(MasterState),
    AuthPending,
    AuthResult(bool),
    BridgeError(String),
    Games {
        games: GameServers,
        at_ms: f64,
    },
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            Action::Connecting => s.conn = Conn::Connecting,
            Action::Opened => {
                s.conn = Conn::Open;
                s.receiving = false;
                s.polling = false;
            }
            Action::Closed { at_ms } => {
                s.conn = Conn::Waiting { at_ms };
                s.receiving = false;
                s.polling = false;
                // Master reachability is the bridge's report; unknown now.
                s.master = None;
                // The bridge forgets a connection's sign-in.
                if s.auth == Auth::SignedIn || s.auth == Auth::Pending {
                    s.auth = Auth::SignedOut;
                }
            }
            Action::Polling => s.polling = true,
            Action::PushesResumed => s.polling = false,
            Action::List {
                list,
                at_ms,
                perf_ms,
            } => {
                // The rows changed; a list confirmed current has nothing to
                // render, but it is live again.
                if list.version() != s.list.version() {
                    s.received_perf_ms = perf_ms;
                }
                s.list = list;
                s.received_at_ms = Some(at_ms);
                s.receiving = true;
                s.last_error = None;
                // A list comes through the master, so it is reachable.
                s.master = Some(MasterState::Up);
            }
            Action::Master(m) => s.master = Some(m),
            Action::AuthPending => s.auth = Auth::Pending,
            Action::AuthResult(ok) => s.auth = if ok { Auth::SignedIn } else { Auth::Rejected },
            Action::BridgeError(message) => s.last_error = Some(message),
            Action::Games { games, at_ms } => {
                s.games = Some(Rc::new(games));
                s.games_version = s.games_version.wrapping_add(1);
                s.games_at_ms = Some(at_ms);
            }
        }
        Rc::new(s)
    }
}

/// The status pill's look and words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusView {
    /// CSS modifier: `live`, `wait`, `down`.
    pub tone: &'static str,
    pub text: String,
}

/// What the pill says at `now_ms`: Live · Reconnecting in N s · Master
/// unreachable (or Connecting… before the first answer).
pub fn status_view(s: &State, now_ms: f64) -> StatusView {
    use crate::i18n::{t, tf, K};
    match s.conn {
        Conn::Waiting { at_ms } => {
            let secs = ((at_ms - now_ms) / 1000.0).ceil().max(0.0) as u64;
            StatusView {
                tone: "wait",
                text: if secs == 0 {
                    t(K::Reconnecting).to_owned()
                } else {
                    tf(K::ReconnectingIn, &[&secs])
                },
            }
        }
        _ if s.master == Some(MasterState::Down) => StatusView {
            tone: "down",
            text: t(K::MasterUnreachable).to_owned(),
        },
        Conn::Open if s.receiving => StatusView {
            tone: "live",
            text: t(if s.polling { K::LivePolling } else { K::Live }).to_owned(),
        },
        Conn::Open | Conn::Connecting => StatusView {
            tone: "wait",
            text: t(K::Connecting).to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        list::{
            lobby::tests::entry,
            store::tests::{delta, keyed, snapshot},
        },
        services::connection::ListMessage,
    };

    fn reduce(s: Rc<State>, a: Action) -> Rc<State> {
        s.reduce(a)
    }

    /// The state after `message` arrives (at 1000 ms wall clock, 5 ms
    /// `performance.now()`), and whether the page asks to subscribe again.
    fn receive(s: Rc<State>, message: ListMessage) -> (Rc<State>, bool) {
        match events::receive(&mut s.list.clone(), message, 1000.0, 5.0) {
            Some(action) => (reduce(s, action), false),
            None => (s, true),
        }
    }

    /// The state after a whole list of two servers, "a" with `n` players.
    fn list(s: Rc<State>, n: u32) -> Rc<State> {
        let whole = ListMessage::Whole(vec![entry("a", n, 4, true, 1), entry("b", 1, 4, true, 1)]);
        receive(s, whole).0
    }

    #[test]
    fn lifecycle_and_pill() {
        let s = Rc::new(State::default());
        assert_eq!(status_view(&s, 0.0).text, "Connecting…");
        let s = reduce(s, Action::Opened);
        assert_eq!(status_view(&s, 0.0).text, "Connecting…");
        assert!(s.disconnected(), "open, but no list on it yet");
        let s = list(s, 0);
        assert!(!s.disconnected());
        assert_eq!(status_view(&s, 0.0).text, "Live");
        assert_eq!(status_view(&s, 0.0).tone, "live");
        let s = reduce(s, Action::Master(MasterState::Down));
        assert_eq!(status_view(&s, 0.0).text, "Master unreachable");
        let s = reduce(s, Action::Closed { at_ms: 10_000.0 });
        assert_eq!(status_view(&s, 7_100.0).text, "Reconnecting in 3 s");
        assert_eq!(status_view(&s, 10_500.0).text, "Reconnecting…");
        assert_eq!(s.master, None);
        assert!(s.disconnected());
        // The list survives a disconnect.
        assert_eq!(s.list.rows().len(), 2);
        let s = reduce(s, Action::Opened);
        let s = reduce(s, Action::Polling);
        let s = list(s, 0);
        assert_eq!(status_view(&s, 0.0).text, "Live (polling)");
        let s = reduce(s, Action::PushesResumed);
        assert_eq!(status_view(&s, 0.0).text, "Live");
    }

    #[test]
    fn versions_mark_changed_rows() {
        let s = list(Rc::new(State::default()), 0);
        let shown = s.list.shown();
        assert_eq!(shown.version(), 1);
        assert!(shown.rows().iter().all(|r| !shown.is_changed(r.id)));
        let s = list(s, 2);
        let shown = s.list.shown();
        assert_eq!(shown.version(), 2);
        assert!(shown.is_changed(shown.rows()[0].id));
        assert!(!shown.is_changed(shown.rows()[1].id));
    }

    #[test]
    fn a_list_that_does_not_apply_asks_to_subscribe_again_and_shows_nothing() {
        let s = Rc::new(State::default());
        let (s, again) = receive(s, delta(3, vec![], vec![]));
        assert!(again, "asks to subscribe again");
        assert!(!s.receiving, "nothing vouched for arrived");
        assert_eq!(s.received_at_ms, None);
        let (s, _) = receive(s, snapshot(3, vec![keyed(1, "a", 0)]));
        assert_eq!((s.list.version(), s.received_perf_ms), (1, 5.0));
        assert!(s.receiving);
        let (s, again) = receive(s, delta(7, vec![], vec![]));
        assert!(again, "asks again for a second message that does not apply");
        assert_eq!(s.list.resume().map(|r| r.since), Some(3));
        // Confirmed current: live, but nothing to render.
        let confirm = events::receive(&mut s.list.clone(), delta(3, vec![], vec![]), 2000.0, 9.0);
        let s = reduce(s, confirm.expect("a confirmation applies"));
        assert_eq!(s.received_at_ms, Some(2000.0));
        assert_eq!((s.list.version(), s.received_perf_ms), (1, 5.0));
    }

    #[test]
    fn games_are_kept_across_reconnects() {
        let s = Rc::new(State::default());
        assert_eq!(s.games, None);
        let s = reduce(
            s,
            Action::Games {
                games: GameServers::default(),
                at_ms: 7.0,
            },
        );
        assert_eq!(s.games_version, 1);
        assert_eq!(s.games_at_ms, Some(7.0));
        let s = reduce(s, Action::Closed { at_ms: 0.0 });
        assert!(s.games.is_some());
        // The lobby's list is untouched by games.
        assert_eq!(s.list.version(), 0);
    }

    #[test]
    fn sign_in_is_lost_with_the_connection() {
        let s = reduce(Rc::new(State::default()), Action::AuthPending);
        let s = reduce(s, Action::AuthResult(true));
        assert_eq!(s.auth, Auth::SignedIn);
        let s = reduce(s, Action::Closed { at_ms: 0.0 });
        assert_eq!(s.auth, Auth::SignedOut);
        let s = reduce(s, Action::AuthResult(false));
        assert_eq!(s.auth, Auth::Rejected);
    }
}
