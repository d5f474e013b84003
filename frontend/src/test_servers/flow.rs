//! One test server's socket as a pure state machine: sign in with the tab's
//! token, register with the latest stats, and register again after every
//! reconnect and whenever the master comes back after refusing it. After
//! each registration it asks the master for the list over the same
//! connection, so the answer shows the registration (the page's own list
//! may never change: a server registered again exactly as it was leaves
//! the bridge nothing to push). A socket that had no token, or whose token
//! was refused, signs in again once the page's own connection signs in.
//! The provider (`provider`) feeds it events and a way to send, and
//! carries out the [`Effect`]s it returns; the rules are tested natively
//! (like `services::connection::polling`).

use protocol::{
    bridge::{ClientMessage, ErrorCode, MasterState},
    Command, Stats,
};

use super::{Phase, TestServerDef};
use crate::services::connection::{decode::Incoming, ConnEvent, ListMessage};

/// The fallback wait before registering again after a `master-down` refusal.
pub const RETRY_MS: u32 = 3000;

/// What the provider does after an event, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Show this phase on the server's card.
    Phase(Phase),
    /// Registration and stats went out now (`TsAction::Registered`).
    Registered,
    /// The master's answer to the query sent after the registration lists
    /// the server (`TsAction::Listed`).
    Listed,
    /// The bridge's refusal, shown on the card until the next registration.
    BridgeError(String),
    /// Call [`Flow::on_retry`] after [`RETRY_MS`]; a later `RetryLater`
    /// replaces this one (only the latest timer counts).
    RetryLater,
}

/// Where one server's current socket stands. `master_down`: the socket was
/// told the master is down and not yet that it is up again.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Flow {
    /// No socket open: connecting, or closed and waiting to reconnect.
    #[default]
    Closed,
    /// Open; `bridgeAuth` went out, no answer yet.
    SigningIn { master_down: bool },
    /// Open, but the tab holds no token: it signs in when the page does.
    NoToken { master_down: bool },
    /// Open; the bridge refused the token: it signs in again when the page
    /// signs in.
    Rejected { master_down: bool },
    /// Signed in, not registered: the master is down, refused the
    /// registration, or the frames could not go out. `retry`: a
    /// registration the bridge refused with `master-down` is tried again
    /// after [`RETRY_MS`] even if no `bridgeStatus up` comes (when this
    /// socket never saw the master go down, it will not see it come back).
    SignedIn { master_down: bool, retry: bool },
    /// Signed in, registration sent and not refused; `sent` are the stats
    /// last sent.
    Registered { master_down: bool, sent: Stats },
}

impl Flow {
    fn master_down(&self) -> bool {
        match *self {
            Flow::Closed => false,
            Flow::SigningIn { master_down }
            | Flow::NoToken { master_down }
            | Flow::Rejected { master_down }
            | Flow::SignedIn { master_down, .. }
            | Flow::Registered { master_down, .. } => master_down,
        }
    }

    fn set_master_down(&mut self, down: bool) {
        match self {
            Flow::Closed => {}
            Flow::SigningIn { master_down }
            | Flow::NoToken { master_down }
            | Flow::Rejected { master_down }
            | Flow::SignedIn { master_down, .. }
            | Flow::Registered { master_down, .. } => *master_down = down,
        }
    }

    /// Handles `ev` for server `def` (`None` once it was removed). `token`
    /// is asked only when the socket opens; `send` queues a frame and says
    /// whether the socket took it.
    pub fn on_event(
        &mut self,
        ev: ConnEvent,
        def: Option<&TestServerDef>,
        token: impl FnOnce() -> Option<String>,
        send: impl FnMut(String) -> bool,
    ) -> Vec<Effect> {
        match ev {
            ConnEvent::Connecting => {
                *self = Flow::Closed;
                vec![Effect::Phase(Phase::Connecting)]
            }
            ConnEvent::Opened => self.sign_in(token(), send),
            ConnEvent::Closed { .. } => {
                *self = Flow::Closed;
                vec![Effect::Phase(Phase::Reconnecting)]
            }
            ConnEvent::Message { msg, .. } => self.on_message(msg, def, send),
            _ => Vec::new(),
        }
    }

    /// Sends `bridgeAuth` with `token`, or waits for one.
    fn sign_in(
        &mut self,
        token: Option<String>,
        mut send: impl FnMut(String) -> bool,
    ) -> Vec<Effect> {
        let master_down = self.master_down();
        match token {
            Some(token) => {
                send(ClientMessage::Auth { token }.to_json());
                *self = Flow::SigningIn { master_down };
                vec![Effect::Phase(Phase::SigningIn)]
            }
            None => {
                *self = Flow::NoToken { master_down };
                vec![Effect::Phase(Phase::NoToken)]
            }
        }
    }

    fn on_message(
        &mut self,
        msg: Incoming,
        def: Option<&TestServerDef>,
        send: impl FnMut(String) -> bool,
    ) -> Vec<Effect> {
        let master_down = self.master_down();
        match msg {
            Incoming::AuthResult(true) => {
                let retry = matches!(self, Flow::SignedIn { retry: true, .. });
                *self = Flow::SignedIn { master_down, retry };
                if master_down {
                    vec![Effect::Phase(Phase::MasterDown)]
                } else {
                    self.register(def, send)
                }
            }
            Incoming::AuthResult(false) => {
                *self = Flow::Rejected { master_down };
                vec![Effect::Phase(Phase::Rejected)]
            }
            Incoming::Master(MasterState::Down) => {
                self.set_master_down(true);
                if self.signed_in() {
                    vec![Effect::Phase(Phase::MasterDown)]
                } else {
                    Vec::new()
                }
            }
            Incoming::Master(MasterState::Up) => {
                self.set_master_down(false);
                match self {
                    // A hung master kept the registration: it is back as is.
                    Flow::Registered { .. } => vec![Effect::Phase(Phase::Registered)],
                    Flow::SignedIn { .. } => self.register(def, send),
                    _ => Vec::new(),
                }
            }
            Incoming::Error {
                code: Some(ErrorCode::MasterDown),
                message,
            } => {
                // While the bridge reports the master down, its "up" is the
                // signal; the timer covers a socket that never heard "down".
                let retry = !master_down;
                if self.signed_in() {
                    *self = Flow::SignedIn { master_down, retry };
                }
                let mut effects = Vec::with_capacity(3);
                if retry {
                    effects.push(Effect::RetryLater);
                }
                effects.push(Effect::BridgeError(message));
                effects.push(Effect::Phase(Phase::MasterDown));
                effects
            }
            Incoming::Error { message, .. } => vec![Effect::BridgeError(message)],
            // Only this socket's own query is answered on it, and it went out
            // after the registration on the same master connection.
            Incoming::List(ListMessage::Whole(servers))
                if matches!(self, Flow::Registered { .. })
                    && def.is_some_and(|d| servers.iter().any(|e| d.is_listed_as(e))) =>
            {
                vec![Effect::Listed]
            }
            _ => Vec::new(),
        }
    }

    fn signed_in(&self) -> bool {
        matches!(self, Flow::SignedIn { .. } | Flow::Registered { .. })
    }

    /// The latest retry timer fired: registers unless anything happened on
    /// the socket since the refusal that set it.
    pub fn on_retry(
        &mut self,
        def: Option<&TestServerDef>,
        send: impl FnMut(String) -> bool,
    ) -> Vec<Effect> {
        if matches!(self, Flow::SignedIn { retry: true, .. }) {
            self.register(def, send)
        } else {
            Vec::new()
        }
    }

    /// The page's own connection signed in: a socket that had no token, or
    /// whose token was refused, signs in with `token` now.
    pub fn on_page_signed_in(
        &mut self,
        token: &str,
        mut send: impl FnMut(String) -> bool,
    ) -> Vec<Effect> {
        let master_down = match *self {
            Flow::NoToken { master_down } | Flow::Rejected { master_down } => master_down,
            _ => return Vec::new(),
        };
        let auth = ClientMessage::Auth {
            token: token.to_owned(),
        };
        if send(auth.to_json()) {
            *self = Flow::SigningIn { master_down };
            vec![Effect::Phase(Phase::SigningIn)]
        } else {
            Vec::new()
        }
    }

    /// The admin changed `def`: its stats go out at once while it is
    /// registered, and only when they differ from the last ones sent.
    pub fn update_stats(&mut self, def: &TestServerDef, mut send: impl FnMut(String) -> bool) {
        let stats = def.stats();
        if let Flow::Registered { sent, .. } = self {
            if *sent != stats && send(def.stats_json()) {
                *sent = stats;
            }
        }
    }

    /// Sends the registration, the latest stats and a query whose answer
    /// confirms them. A definition that fails the protocol's rules (edited
    /// in storage by hand) never goes out.
    fn register(
        &mut self,
        def: Option<&TestServerDef>,
        mut send: impl FnMut(String) -> bool,
    ) -> Vec<Effect> {
        let Some(def) = def else {
            return Vec::new();
        };
        let register = match def.register_json() {
            Ok(register) => register,
            Err(e) => return vec![Effect::Phase(Phase::Invalid(e.to_string()))],
        };
        let master_down = self.master_down();
        // Whatever comes of it, a pending retry is moot now.
        *self = Flow::SignedIn {
            master_down,
            retry: false,
        };
        if send(register) && send(def.stats_json()) {
            *self = Flow::Registered {
                master_down,
                sent: def.stats(),
            };
            // The answer is confirmation only: if it cannot go out, the
            // page's list still can confirm the server.
            send(Command::Query.to_json());
            vec![Effect::Registered]
        } else {
            Vec::new()
        }
    }
}

/// The running servers whose definitions are gone: they unregister and
/// close.
pub fn removed(running: impl Iterator<Item = u64>, defs: &[TestServerDef]) -> Vec<u64> {
    running
        .filter(|id| !defs.iter().any(|d| d.id == *id))
        .collect()
}

#[cfg(test)]
mod tests {
    use protocol::{ServerEntry, ValidationError};

    use super::*;
    use crate::test_servers::samples::samples;

    /// One server's flow on a fake socket that records what it took while
    /// open; the tab holds a token unless `token` is cleared.
    struct Rig {
        flow: Flow,
        def: Option<TestServerDef>,
        token: Option<String>,
        closed: bool,
        frames: Vec<String>,
    }

    impl Rig {
        fn new() -> Self {
            Rig::with(samples(1)[0].clone())
        }

        fn with(def: TestServerDef) -> Self {
            Rig {
                flow: Flow::default(),
                def: Some(def),
                token: Some("tok".into()),
                closed: false,
                frames: Vec::new(),
            }
        }

        /// Opened, signed in and registered.
        fn registered() -> Self {
            let mut r = Rig::new();
            r.ev(ConnEvent::Connecting);
            r.ev(ConnEvent::Opened);
            assert_eq!(r.msg(Incoming::AuthResult(true)), [Effect::Registered]);
            r.take();
            r
        }

        fn ev(&mut self, ev: ConnEvent) -> Vec<Effect> {
            let token = self.token.clone();
            let send = sock(&mut self.frames, self.closed);
            self.flow.on_event(ev, self.def.as_ref(), || token, send)
        }

        fn msg(&mut self, msg: Incoming) -> Vec<Effect> {
            self.ev(ConnEvent::Message { msg, perf_ms: 0.0 })
        }

        fn master(&mut self, state: MasterState) -> Vec<Effect> {
            self.msg(Incoming::Master(state))
        }

        fn refused(&mut self, code: ErrorCode, message: &str) -> Vec<Effect> {
            self.msg(Incoming::Error {
                code: Some(code),
                message: message.into(),
            })
        }

        fn retry(&mut self) -> Vec<Effect> {
            let send = sock(&mut self.frames, self.closed);
            self.flow.on_retry(self.def.as_ref(), send)
        }

        fn page_signed_in(&mut self) -> Vec<Effect> {
            let send = sock(&mut self.frames, self.closed);
            self.flow.on_page_signed_in("tok", send)
        }

        fn update(&mut self, def: &TestServerDef) {
            let send = sock(&mut self.frames, self.closed);
            self.flow.update_stats(def, send);
        }

        fn take(&mut self) -> Vec<String> {
            std::mem::take(&mut self.frames)
        }

        /// Registration, stats and the confirming query of the rig's server.
        fn registration(&self) -> Vec<String> {
            let def = self.def.as_ref().unwrap();
            vec![
                def.register_json().unwrap(),
                def.stats_json(),
                Command::Query.to_json(),
            ]
        }
    }

    /// A fake socket's `send`: records the frame unless it is closed.
    fn sock(frames: &mut Vec<String>, closed: bool) -> impl FnMut(String) -> bool + '_ {
        move |frame| {
            if !closed {
                frames.push(frame);
            }
            !closed
        }
    }

    fn asks_for_a_retry(effects: &[Effect]) {
        assert_eq!(effects.first(), Some(&Effect::RetryLater), "{effects:?}");
    }

    #[test]
    fn signs_in_then_registers_with_the_stats() {
        let mut r = Rig::new();
        assert_eq!(
            r.ev(ConnEvent::Connecting),
            [Effect::Phase(Phase::Connecting)]
        );
        assert_eq!(r.ev(ConnEvent::Opened), [Effect::Phase(Phase::SigningIn)]);
        assert_eq!(
            r.take(),
            [r#"{"command":"bridgeAuth","content":{"token":"tok"}}"#]
        );
        assert_eq!(r.msg(Incoming::AuthResult(true)), [Effect::Registered]);
        assert_eq!(r.take(), r.registration());
    }

    #[test]
    fn no_token_or_a_refused_one_signs_in_when_the_page_does() {
        let auth = r#"{"command":"bridgeAuth","content":{"token":"tok"}}"#;
        let mut r = Rig::new();
        r.token = None;
        assert_eq!(r.ev(ConnEvent::Opened), [Effect::Phase(Phase::NoToken)]);
        assert!(r.take().is_empty());
        assert_eq!(r.page_signed_in(), [Effect::Phase(Phase::SigningIn)]);
        assert_eq!(r.take(), [auth]);
        // Signing in: the page's sign-in sends nothing more.
        assert!(r.page_signed_in().is_empty());
        assert_eq!(
            r.msg(Incoming::AuthResult(false)),
            [Effect::Phase(Phase::Rejected)]
        );
        assert!(r.take().is_empty());
        assert_eq!(r.page_signed_in(), [Effect::Phase(Phase::SigningIn)]);
        assert_eq!(r.take(), [auth]);
        assert_eq!(r.msg(Incoming::AuthResult(true)), [Effect::Registered]);
        r.take();
        // Registered (or not open at all): nothing to do.
        assert!(r.page_signed_in().is_empty());
        assert!(Rig::new().page_signed_in().is_empty());
        assert!(r.take().is_empty());
        // A socket that cannot send stays refused, to try again later.
        let mut r = Rig::new();
        r.ev(ConnEvent::Opened);
        r.msg(Incoming::AuthResult(false));
        r.take();
        r.closed = true;
        assert!(r.page_signed_in().is_empty());
        r.closed = false;
        assert_eq!(r.page_signed_in(), [Effect::Phase(Phase::SigningIn)]);
    }

    #[test]
    fn a_hung_master_keeps_the_registration() {
        let mut r = Rig::registered();
        assert_eq!(
            r.master(MasterState::Down),
            [Effect::Phase(Phase::MasterDown)]
        );
        assert_eq!(
            r.master(MasterState::Up),
            [Effect::Phase(Phase::Registered)]
        );
        assert!(r.take().is_empty());
    }

    #[test]
    fn a_refusal_while_the_master_is_down_waits_for_up() {
        let mut r = Rig::registered();
        r.master(MasterState::Down);
        // No timer: the bridge's "up" is the signal.
        assert_eq!(
            r.refused(ErrorCode::MasterDown, "master down"),
            [
                Effect::BridgeError("master down".into()),
                Effect::Phase(Phase::MasterDown)
            ]
        );
        assert_eq!(r.master(MasterState::Up), [Effect::Registered]);
        assert_eq!(r.take(), r.registration());
    }

    #[test]
    fn a_refusal_without_down_retries_on_a_timer_once() {
        let mut r = Rig::registered();
        let effects = r.refused(ErrorCode::MasterDown, "master down");
        assert_eq!(effects.len(), 3);
        asks_for_a_retry(&effects);
        assert_eq!(r.retry(), [Effect::Registered]);
        assert_eq!(r.take(), r.registration());
        // That registration cancelled the timer: firing again sends nothing.
        assert!(r.retry().is_empty());
        assert!(r.take().is_empty());
    }

    #[test]
    fn a_reconnect_cancels_the_retry_and_registers_anew() {
        let mut r = Rig::registered();
        asks_for_a_retry(&r.refused(ErrorCode::MasterDown, "master down"));
        assert_eq!(
            r.ev(ConnEvent::Closed { retry_at_ms: 1.0 }),
            [Effect::Phase(Phase::Reconnecting)]
        );
        assert!(r.retry().is_empty());
        r.ev(ConnEvent::Connecting);
        r.ev(ConnEvent::Opened);
        assert_eq!(r.msg(Incoming::AuthResult(true)), [Effect::Registered]);
        assert_eq!(r.take()[1..], r.registration());
    }

    #[test]
    fn down_before_sign_in_holds_the_registration() {
        let mut r = Rig::new();
        r.ev(ConnEvent::Opened);
        r.take();
        assert!(r.master(MasterState::Down).is_empty());
        assert_eq!(
            r.msg(Incoming::AuthResult(true)),
            [Effect::Phase(Phase::MasterDown)]
        );
        assert!(r.take().is_empty());
        // "Up" before sign-in does nothing either.
        assert!(Rig::new().master(MasterState::Up).is_empty());
    }

    #[test]
    fn an_invalid_definition_never_goes_out() {
        let mut def = samples(1)[0].clone();
        def.port = 51963;
        let mut r = Rig::with(def);
        r.ev(ConnEvent::Opened);
        r.take();
        assert_eq!(
            r.msg(Incoming::AuthResult(true)),
            [Effect::Phase(Phase::Invalid(
                ValidationError::PortReserved.to_string()
            ))]
        );
        assert!(r.take().is_empty());
        // A removed server registers nothing.
        r.def = None;
        assert!(r.master(MasterState::Up).is_empty());
    }

    #[test]
    fn a_closed_socket_leaves_it_unregistered() {
        let mut r = Rig::new();
        r.ev(ConnEvent::Opened);
        r.take();
        r.closed = true;
        assert!(r.msg(Incoming::AuthResult(true)).is_empty());
        // So the stats are not sent on their own, and "up" registers.
        r.closed = false;
        let def = r.def.clone().unwrap();
        r.update(&def);
        assert!(r.take().is_empty());
        assert_eq!(r.master(MasterState::Up), [Effect::Registered]);
    }

    #[test]
    fn changed_stats_go_out_once() {
        let mut r = Rig::registered();
        let mut def = r.def.clone().unwrap();
        r.update(&def);
        assert!(r.take().is_empty());
        def.current = 3;
        r.update(&def);
        assert_eq!(r.take(), [def.stats_json()]);
        r.update(&def);
        assert!(r.take().is_empty());
    }

    #[test]
    fn other_errors_only_show() {
        let mut r = Rig::registered();
        assert_eq!(
            r.refused(ErrorCode::RateLimited, "slow down"),
            [Effect::BridgeError("slow down".into())]
        );
        // Still registered: no new registration on "up".
        assert_eq!(
            r.master(MasterState::Up),
            [Effect::Phase(Phase::Registered)]
        );
    }

    #[test]
    fn the_answer_to_its_own_query_confirms_the_registration() {
        let mut r = Rig::new();
        let def = r.def.clone().unwrap();
        let mut listed = crate::list::lobby::tests::entry(&def.name, 0, 4, true, 1);
        listed.address = Some(def.address.clone());
        listed.port = Some(def.port);
        let other = crate::list::lobby::tests::entry("Someone else", 0, 4, true, 1);
        let list = |servers: Vec<ServerEntry>| Incoming::List(ListMessage::Whole(servers));
        // Before the registration went out a list proves nothing.
        r.ev(ConnEvent::Opened);
        r.take();
        assert!(r.msg(list(vec![listed.clone()])).is_empty());
        assert_eq!(r.msg(Incoming::AuthResult(true)), [Effect::Registered]);
        assert_eq!(r.take(), r.registration());
        assert!(r.msg(list(vec![other.clone()])).is_empty());
        assert_eq!(
            r.msg(list(vec![other.clone(), listed.clone()])),
            [Effect::Listed]
        );
        // A bridge that hides addresses: the name is all there is.
        let mut hidden = listed.clone();
        hidden.address = None;
        hidden.port = None;
        assert_eq!(r.msg(list(vec![hidden])), [Effect::Listed]);
        // After the socket closed, until it registers again.
        r.ev(ConnEvent::Closed { retry_at_ms: 0.0 });
        assert!(r.msg(list(vec![listed])).is_empty());
    }

    #[test]
    fn removed_definitions() {
        let defs = samples(1)[..2].to_vec();
        assert_eq!(removed([1, 2, 7].into_iter(), &defs), [7]);
        assert!(removed([1].into_iter(), &defs).is_empty());
    }
}
