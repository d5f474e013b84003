//! Who sees what: [`Visibility`], the one rule for what a viewer may see
//! of anything the bridge publishes or answers (the lobby list, its deltas
//! and snapshots, `/api/`, the other games, notifications), and
//! [`Encoded`], a message in the two forms it writes. Beneath the live
//! list, the answers and the notifications alike, which all ask it.

use protocol::{entry::ServerDetails, Addresses};
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// What viewers may see of everything the bridge publishes (the lobby
/// list, its deltas and snapshots, `/api/servers` and a server's details,
/// the other games, notifications): decided once from `--hide-addresses`.
/// Admins always see addresses ([`Visibility::ADMINS`]). The bridge's
/// outward shapes take their audience from here, never a hand-picked
/// [`Addresses`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visibility {
    viewers: Addresses,
}

impl Visibility {
    /// What admins see, whatever the bridge hides from viewers: every
    /// server's address and port (never a registrant: that is for the
    /// master's feed to bridges alone).
    pub const ADMINS: Addresses = Addresses::Shown;

    /// The rule for a bridge started with (or without) `--hide-addresses`.
    pub fn new(hide_addresses: bool) -> Self {
        let viewers = if hide_addresses {
            Addresses::Hidden
        } else {
            Addresses::Shown
        };
        Self { viewers }
    }

    /// Whether viewers see servers' addresses: also what every answer to
    /// an anonymous request (`/api/`) and every notification shows.
    pub fn viewers(&self) -> Addresses {
        self.viewers
    }

    /// Whether an admin is shown more than a viewer: then a session that
    /// signs in is sent the admins' form of what it was sent before.
    pub fn admins_see_more(&self) -> bool {
        self.viewers != Self::ADMINS
    }

    /// Both forms of a message that `write` lays out for an audience; the
    /// viewers' form is written only when it differs from the admins'.
    pub fn encode<T: Into<Utf8Bytes>>(&self, write: impl Fn(Addresses) -> T) -> Encoded {
        self.encode_as(write(Self::ADMINS), write)
    }

    /// Both forms of a message whose admins' form is at hand (`full`);
    /// `viewers` writes the viewers' form for the audience it is given,
    /// only when that differs from the admins'.
    pub fn encode_as<T: Into<Utf8Bytes>>(
        &self,
        full: impl Into<Utf8Bytes>,
        viewers: impl FnOnce(Addresses) -> T,
    ) -> Encoded {
        let full = full.into();
        let viewer = if self.admins_see_more() {
            viewers(self.viewers).into()
        } else {
            full.clone()
        };
        Encoded { full, viewer }
    }

    /// A server's details (`/api/servers/{key}`) as viewers may see them,
    /// with the Join link only where they see its address.
    pub fn details(
        &self,
        details: ServerDetails,
        join: Option<&protocol::join::JoinTemplate>,
    ) -> ServerDetails {
        details.seen_as(self.viewers).joined_by(join)
    }

    /// The Join links' template as viewers may be given it: none while
    /// they do not see addresses (a link would show the address).
    pub fn join<'a>(
        &self,
        template: Option<&'a protocol::join::JoinTemplate>,
    ) -> Option<&'a protocol::join::JoinTemplate> {
        template.filter(|_| self.viewers.shown())
    }
}

/// One message in the two forms the bridge sends it: with addresses (to
/// admins) and as viewers may see it (the same text, shared, unless
/// `--hide-addresses`).
#[derive(Debug, Clone)]
pub struct Encoded {
    pub full: Utf8Bytes,
    pub viewer: Utf8Bytes,
}

impl Encoded {
    /// The form for an admin (`true`) or a viewer.
    pub fn for_role(&self, admin: bool) -> &Utf8Bytes {
        if admin {
            &self.full
        } else {
            &self.viewer
        }
    }
}

#[cfg(test)]
mod tests {
    use protocol::join::JoinTemplate;

    use super::*;

    const ADDRESS: &str = "203.0.113.5";

    /// Details as admins are answered them, read the way the page reads
    /// them.
    fn details() -> ServerDetails {
        serde_json::from_str(
            r#"{"key":"00000000000000ab","name":"Alpha","address":"203.0.113.5","port":20001,
                "online":true,"players":{"current":2,"max":4},"isLobbyOpen":true,
                "gameplayMode":1,"firstSeen":1000,"lastSeen":2000}"#,
        )
        .expect("details as the bridge writes them")
    }

    #[test]
    fn hidden_viewers_never_see_an_address_and_admins_always_do() {
        let template = JoinTemplate::parse("bomber://{address}:{port}").unwrap();
        let hidden = Visibility::new(true);
        let seen = hidden.details(details(), Some(&template));
        assert_eq!((seen.address, seen.port, seen.join_url), (None, None, None));
        assert!(hidden.join(Some(&template)).is_none());
        let forms = hidden.encode(|a| format!("{:?}", a.show(Some(ADDRESS), Some(20001))));
        assert!(!forms.viewer.as_str().contains(ADDRESS), "{forms:?}");
        assert!(forms.full.as_str().contains(ADDRESS), "{forms:?}");

        let shown = Visibility::new(false);
        let seen = shown.details(details(), Some(&template));
        assert_eq!(seen.address.as_deref(), Some(ADDRESS));
        assert_eq!(seen.join_url.as_deref(), Some("bomber://203.0.113.5:20001"));
        assert!(shown.join(Some(&template)).is_some());
        let forms = shown.encode(|a| format!("{:?}", a.show(Some(ADDRESS), Some(20001))));
        assert!(forms.viewer.as_str().contains(ADDRESS), "{forms:?}");
        assert!(!shown.admins_see_more() && hidden.admins_see_more());
    }
}
