//! The list from a master running in this process: every change of its
//! registry is published as it happens, no polling. The registry says what
//! changed since the list this follower last took
//! ([`master::Registry::catch_up`], which visits only what changed) and
//! the change is passed on as it is; the whole list is read only the first
//! time and when the bridge's list no longer follows the registry's
//! numbers.

use std::sync::Arc;

use master::registry::{next_changes, RegistryFollower};
use protocol::delta::{Changeset, Entries, Keyed, Unfollowed};
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
    /// Follows `registry` into `upstream` once run.
    pub fn new(upstream: Arc<Upstream>, registry: Arc<master::Registry>) -> Self {
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
            seen = Some(registry.catch_up(seen.as_ref(), &mut Taking(&upstream)));
            if !next_changes(&mut changes, &cancel).await {
                return;
            }
        }
    }
}

/// The upstream as the registry's follower.
struct Taking<'a>(&'a Upstream);

impl RegistryFollower for Taking<'_> {
    fn pass_on(&mut self, change: Changeset, _: &Entries) -> Result<(), Unfollowed> {
        self.0.pass_on(vec![change], None)
    }

    fn follow(&mut self, now: &Entries) {
        self.0
            .follow(now.values().map(|k| Keyed::clone(k)).collect(), None);
    }
}
