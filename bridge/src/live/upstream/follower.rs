//! The list from a master running in this process: every change of its
//! registry is published as it happens, no polling. The registry's list
//! is published as it is: the registry numbers its entries and keys them
//! with the bridge's keys ([`master::Registry::key_with`]), and what
//! changed since the list this follower last took is found by comparing
//! the two ([`master::Registry::catch_up`], which visits only what
//! changed). The process holds the list once.

use std::sync::Arc;

use master::registry::next_changes;
use tokio_util::sync::CancellationToken;

use super::Upstream;

/// The embedded master's mode: its registry, followed into the
/// [`Upstream`]. Admins' own lists are never wanted (the registry's change
/// watch publishes every change, an admin's included).
#[derive(Debug, Clone)]
pub struct Follower {
    upstream: Arc<Upstream>,
    registry: Arc<master::Registry>,
}

impl Follower {
    /// Follows `registry` into `upstream` once run; from now on the
    /// registry keys its entries with the upstream's keys.
    pub fn new(upstream: Arc<Upstream>, registry: Arc<master::Registry>) -> Self {
        upstream.key_registry(&registry);
        Self { upstream, registry }
    }

    /// Publishes the registry's list after each change until `cancel`
    /// fires (the changes [`next_changes`] gathers go out together).
    pub async fn run(self, cancel: CancellationToken) {
        let Self { upstream, registry } = self;
        let mut changes = registry.changes();
        upstream.set_up();
        let mut seen = None;
        loop {
            changes.borrow_and_update();
            seen = Some(upstream.take_registry(&registry, seen.as_ref()));
            if !next_changes(&mut changes, &cancel).await {
                return;
            }
        }
    }
}
