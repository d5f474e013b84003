//! Where one test server's connection stands, and how its card says so.

/// Where one test server's own connection stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    Connecting,
    SigningIn,
    /// Registration and stats sent; confirmed once listed.
    Registered,
    /// The bridge says the master is down (or refused the registration for
    /// it): the server registers again, with its last stats, once the
    /// bridge reports the master up.
    MasterDown,
    Reconnecting,
    /// The tab has no admin token yet.
    NoToken,
    Rejected,
    /// The stored definition fails the protocol's rules (the message says why).
    Invalid(String),
}

impl Phase {
    /// The status pill's tone (`ok`, `wait`, `bad`) and words; `listed`
    /// says whether the server shows up in the live list.
    pub fn status(&self, listed: bool) -> (&'static str, String) {
        use crate::i18n::{t, tf, K};
        match self {
            Phase::Connecting => ("wait", t(K::TsConnecting).to_owned()),
            Phase::SigningIn => ("wait", t(K::TsSigningIn).to_owned()),
            Phase::Registered if listed => ("ok", t(K::TsRegistered).to_owned()),
            Phase::Registered => ("wait", t(K::TsRegistering).to_owned()),
            Phase::MasterDown => ("wait", t(K::TsMasterDown).to_owned()),
            Phase::Reconnecting => ("wait", t(K::TsReconnecting).to_owned()),
            Phase::NoToken => ("bad", t(K::TsNoToken).to_owned()),
            Phase::Rejected => ("bad", t(K::TsRejected).to_owned()),
            Phase::Invalid(msg) => ("bad", tf(K::TsInvalid, &[msg])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words() {
        assert_eq!(Phase::Registered.status(true), ("ok", "registered".into()));
        assert_eq!(Phase::Registered.status(false).1, "registering");
        assert_eq!(Phase::NoToken.status(false).0, "bad");
        assert_eq!(
            Phase::MasterDown.status(true),
            ("wait", "waiting for the master".into())
        );
        assert_eq!(
            Phase::Invalid("bad port".into()).status(true).1,
            "invalid: bad port"
        );
    }
}
