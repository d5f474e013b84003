//! The list from a master running in this process: every change of its
//! registry is published as it happens, no polling. The registry says what
//! changed ([`master::Registry::changes_since`]) and the change is passed on
//! as it is; the whole list is read only the first time and when the
//! registry's journal no longer reaches back.

use std::{sync::Arc, time::Duration};

use tokio_util::sync::CancellationToken;

use super::Upstream;

/// How long the embedded master's changes are gathered into one publish:
/// short next to the fan-out target, long enough that a burst of
/// registrations (a master restart) is one delta rather than thousands.
const COALESCE: Duration = Duration::from_millis(20);

/// Publishes the registry's list after each change until `cancel` fires
/// (changes within [`COALESCE`] of each other go out together).
pub(super) async fn follow(
    upstream: Arc<Upstream>,
    registry: Arc<master::Registry>,
    cancel: CancellationToken,
) {
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
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = cancel.cancelled() => return,
        }
        tokio::select! {
            () = tokio::time::sleep(COALESCE) => {}
            () = cancel.cancelled() => return,
        }
    }
}
