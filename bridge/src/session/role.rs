//! A session's role, viewer or admin, and `bridgeAuth`, which turns the
//! one into the other (guarded per client address by the [`AuthGuard`]).
//!
//! [`AuthGuard`]: super::AuthGuard

use std::sync::atomic::Ordering::Relaxed;

use master::throttled;
use protocol::bridge::{BridgeMessage, ErrorCode};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tracing::{debug, info};

use super::{auth_guard::Verdict, outbox::Close, Session};
use crate::publish::Encoded;

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
        let ip = self.peer.ip();
        let now = Instant::now().into_std();
        if self.handle.auth.verdict(ip, now) == Verdict::Limited {
            debug!(peer = %self.peer, "bridgeAuth refused: too many failures");
            return self.refuse(ErrorCode::RateLimited).await;
        }
        let ok = self.handle.config.admin_token.matches(token);
        let metrics = &self.handle.metrics;
        if ok {
            if self.role == Role::Viewer {
                self.role = Role::Admin;
                metrics.viewers.fetch_sub(1, Relaxed);
                metrics.admins.fetch_add(1, Relaxed);
                if self.handle.config.visibility.admins_see_more() {
                    self.subscription.role_changed();
                }
            }
            info!(peer = %self.peer, "admin authenticated");
        } else {
            metrics.auth_failures.fetch_add(1, Relaxed);
            if self.handle.auth.failed(ip, now) {
                // Once per address per window, and at most a few a window
                // in all: many addresses (an IPv6 /48) stay a few lines.
                throttled!(
                    lines = 5;
                    warn,
                    peer = %self.peer,
                    "bridgeAuth with a wrong token (further failures from this address are \
                     logged at debug for a while, and refused once too many)"
                );
            } else {
                debug!(peer = %self.peer, "bridgeAuth with a wrong token");
            }
        }
        self.send_bridge(&BridgeMessage::AuthResult { ok }).await
    }
}
