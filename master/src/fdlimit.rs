//! The open-file limit, raised at start by the master's and the bridge's
//! binaries: every connection is a file descriptor, and services often start
//! with a soft limit of 1,024 although their hard limit allows far more.

/// Raises the soft open-file limit to the hard one and returns the limit now
/// in force, or `None` (after a warning) where it cannot be read or raised.
pub fn raise_to_hard_limit() -> Option<u64> {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => {
            tracing::debug!(limit, "open-file limit");
            Some(limit)
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot raise the open-file limit");
            None
        }
    }
}
