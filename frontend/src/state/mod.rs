//! The page's shared state (connection, master reachability, the list,
//! admin sign-in) as `State` + `Action` + `impl Reducible`, so every change
//! goes through one pure function that is tested natively; `events` says
//! which actions each event of the page's connection becomes.

pub mod events;

use std::rc::Rc;

use protocol::{
    bridge::{GameServers, MasterState},
    ServerList,
};
use yew::Reducible;

use crate::{
    keyed_rows::{apply_delta, rows_from_snapshot},
    listing::{build_rows, Row},
    services::connection::feed::ListUpdate,
};

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
    pub rows: Rc<Vec<Row>>,
    /// Incremented with every list; drives flashes and render metrics.
    pub version: u32,
    /// When the current list arrived: wall clock (for "N s ago") and
    /// `performance.now()` (for render metrics).
    pub received_at_ms: Option<f64>,
    pub received_perf_ms: f64,
    /// How long reading the current list's frame took (render metrics).
    pub parse_ms: f64,
    /// What the current list's last update was: `list`, `snapshot`, `delta`.
    pub update_kind: &'static str,
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
    /// A whole list (as a bridge without deltas, or a poll, sends it).
    List {
        list: ServerList,
        at_ms: f64,
        perf_ms: f64,
    },
    /// The connection's list changed, or was confirmed current.
    Update {
        update: ListUpdate,
        at_ms: f64,
        perf_ms: f64,
        parse_ms: f64,
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
                return self.reduce(Action::Update {
                    update: ListUpdate::Whole(list.servers),
                    at_ms,
                    perf_ms,
                    parse_ms: f64::NAN,
                })
            }
            Action::Update {
                update,
                at_ms,
                perf_ms,
                parse_ms,
            } => {
                let version = s.version.wrapping_add(1).max(1);
                let (rows, kind) = match update {
                    ListUpdate::Whole(servers) => {
                        (build_rows(servers, &self.rows, version), "list")
                    }
                    ListUpdate::Snapshot(servers) => {
                        (rows_from_snapshot(servers, &self.rows, version), "snapshot")
                    }
                    ListUpdate::Delta { upsert, remove } => {
                        (apply_delta(&self.rows, upsert, &remove, version), "delta")
                    }
                    // Nothing to render; the list is live again.
                    ListUpdate::Current => (Vec::new(), ""),
                };
                if !kind.is_empty() {
                    s.version = version;
                    s.rows = Rc::new(rows);
                    s.received_perf_ms = perf_ms;
                    s.parse_ms = parse_ms;
                    s.update_kind = kind;
                }
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
    use crate::listing::tests::entry;

    fn reduce(s: Rc<State>, a: Action) -> Rc<State> {
        s.reduce(a)
    }

    fn list(n: u32) -> Action {
        Action::List {
            list: ServerList {
                servers: vec![entry("a", n, 4, true, 1), entry("b", 1, 4, true, 1)],
            },
            at_ms: 1000.0,
            perf_ms: 5.0,
        }
    }

    #[test]
    fn lifecycle_and_pill() {
        let s = Rc::new(State::default());
        assert_eq!(status_view(&s, 0.0).text, "Connecting…");
        let s = reduce(s, Action::Opened);
        assert_eq!(status_view(&s, 0.0).text, "Connecting…");
        let s = reduce(s, list(0));
        assert_eq!(status_view(&s, 0.0).text, "Live");
        assert_eq!(status_view(&s, 0.0).tone, "live");
        let s = reduce(s, Action::Master(MasterState::Down));
        assert_eq!(status_view(&s, 0.0).text, "Master unreachable");
        let s = reduce(s, Action::Closed { at_ms: 10_000.0 });
        assert_eq!(status_view(&s, 7_100.0).text, "Reconnecting in 3 s");
        assert_eq!(status_view(&s, 10_500.0).text, "Reconnecting…");
        assert_eq!(s.master, None);
        // The list survives a disconnect.
        assert_eq!(s.rows.len(), 2);
        let s = reduce(s, Action::Opened);
        let s = reduce(s, Action::Polling);
        let s = reduce(s, list(0));
        assert_eq!(status_view(&s, 0.0).text, "Live (polling)");
        let s = reduce(s, Action::PushesResumed);
        assert_eq!(status_view(&s, 0.0).text, "Live");
    }

    #[test]
    fn versions_mark_changed_rows() {
        let s = reduce(Rc::new(State::default()), list(0));
        assert_eq!(s.version, 1);
        assert!(s.rows.iter().all(|r| r.changed_in == 0));
        let s = reduce(s, list(2));
        assert_eq!(s.version, 2);
        assert_eq!(s.rows[0].changed_in, 2);
        assert_eq!(s.rows[1].changed_in, 0);
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
        assert_eq!(s.version, 0);
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
