//! A session's role, viewer or admin, and `bridgeAuth`, which turns the
//! one into the other (guarded per client address by the [`AuthGuard`]).
//!
//! [`AuthGuard`]: super::AuthGuard

use std::sync::atomic::Ordering::Relaxed;

use protocol::bridge::{BridgeMessage, ErrorCode};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tracing::info;

use super::{auth_guard::Checked, outbox::Close, Session};
use crate::visibility::Encoded;

/// What a browser may see and do: viewers start here, `bridgeAuth` with
/// the admin token makes an admin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Viewer,
    Admin,
}

impl Role {
    /// The admins' or the viewers' form of a message.
    pub(super) fn pick(self, text: &Encoded) -> Utf8Bytes {
        text.for_role(self == Role::Admin).clone()
    }
}

impl Session {
    /// `bridgeAuth`: the right token makes this session an admin; wrong
    /// ones are counted per client address, and refused once too many.
    pub(super) async fn on_auth(&mut self, token: &str) -> Result<(), Close> {
        let now = Instant::now().into_std();
        let checked = self.handle.auth.check(
            &self.handle.config.admin_token,
            Some(token),
            self.peer,
            now,
            &self.handle.metrics,
            "bridgeAuth",
        );
        let ok = match checked {
            Checked::Limited => return self.refuse(ErrorCode::RateLimited).await,
            Checked::Wrong => false,
            Checked::Admin => true,
        };
        if ok {
            let metrics = &self.handle.metrics;
            if self.role == Role::Viewer {
                self.role = Role::Admin;
                metrics.viewers.fetch_sub(1, Relaxed);
                metrics.admins.fetch_add(1, Relaxed);
                if self.handle.config.visibility.admins_see_more() {
                    self.subscription.role_changed();
                }
            }
            info!(peer = %self.peer, "admin authenticated");
        }
        self.send_bridge(&BridgeMessage::AuthResult { ok }).await
    }
}
