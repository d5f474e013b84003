//! Who sees what: [`Visibility`], the one rule for what a viewer may see
//! of anything the bridge publishes or answers (the lobby list, its deltas
//! and snapshots, `/api/`, the other games, notifications), and
//! [`Encoded`], a message in the two forms it writes. Beneath the live
//! list, the answers and the notifications alike, which all ask it.

use protocol::Addresses;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// What viewers may see of everything the bridge publishes (the lobby
/// list, its deltas and snapshots, `/api/servers`, the other games):
/// decided once from `--hide-addresses`. Admins always see addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visibility {
    viewers: Addresses,
}

impl Visibility {
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
    /// an anonymous request (`/api/`) shows.
    pub fn viewers(&self) -> Addresses {
        self.viewers
    }

    /// Whether an admin is shown more than a viewer: then a session that
    /// signs in is sent the admins' form of what it was sent before.
    pub fn admins_see_more(&self) -> bool {
        self.viewers == Addresses::Hidden
    }

    /// Both forms of a message that `write` lays out for an audience; the
    /// viewers' form is written only when it differs from the admins'.
    pub fn encode<T: Into<Utf8Bytes>>(&self, write: impl Fn(Addresses) -> T) -> Encoded {
        self.encode_as(write(Addresses::Shown), || write(Addresses::Hidden))
    }

    /// Both forms of a message whose admins' form is at hand (`full`);
    /// `hidden` writes the viewers' form, only when addresses are hidden.
    pub fn encode_as<T: Into<Utf8Bytes>>(
        &self,
        full: impl Into<Utf8Bytes>,
        hidden: impl FnOnce() -> T,
    ) -> Encoded {
        let full = full.into();
        // `viewers` is never `WithRegistrants` (see `new`): the admins'
        // form, which has no registrants either.
        let viewer = match self.viewers {
            Addresses::Hidden => hidden().into(),
            Addresses::Shown | Addresses::WithRegistrants => full.clone(),
        };
        Encoded { full, viewer }
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
