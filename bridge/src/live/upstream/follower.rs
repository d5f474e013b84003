//! The list from a master running in this process: every change of its
//! registry is published as it happens, no polling. The registry says what
//! changed ([`master::Registry::changes_since`]) and the change is passed on
//! as it is; the whole list is read only the first time and when the
//! registry's journal no longer reaches back.

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
        let mut version = None;
        loop {
            changes.borrow_and_update();
            match version.and_then(|v| registry.changes_since(v)) {
                Some((now, changed)) => {
                    upstream.pass_on(changed, || registry.numbered().1, None);
                    version = Some(now);
                }
                None => {
                    let (now, whole) = registry.numbered();
                    upstream.follow(whole, None);
                    version = Some(now);
                }
            }
            if !next_changes(&mut changes, &cancel).await {
                return;
            }
        }
    }
}
