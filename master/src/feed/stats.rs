//! What the feed has done, counted for tests and logs.

use std::sync::{
    atomic::{AtomicU64, Ordering::Relaxed},
    Arc,
};

/// What the feed has done, for tests and logs.
#[derive(Debug, Default)]
pub struct FeedStats {
    /// Subscribers served now.
    pub subscribers: AtomicU64,
    /// Snapshots written (a new subscriber, another epoch, or one that fell
    /// further behind than the ring).
    pub snapshots: AtomicU64,
    /// Delta frames written (heartbeats not counted).
    pub deltas: AtomicU64,
    /// Heartbeats written (a subscriber that saw no change for the interval
    /// it asked for): each is that much time of a quiet feed.
    pub heartbeats: AtomicU64,
    /// Subscribes refused (wrong token, not a subscribe).
    pub refused: AtomicU64,
    /// Connections closed: the feed served its cap of subscribers (or of
    /// connections waiting to subscribe) already.
    pub full: AtomicU64,
    /// Connections closed at once: their address held its cap already.
    pub per_address: AtomicU64,
}

impl FeedStats {
    pub(super) fn count(&self, counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    /// Counts a subscriber until the guard drops.
    pub(super) fn subscribed(self: &Arc<Self>) -> Subscribed {
        self.subscribers.fetch_add(1, Relaxed);
        Subscribed(self.clone())
    }
}

/// One subscriber in [`FeedStats::subscribers`].
pub(super) struct Subscribed(Arc<FeedStats>);

impl Drop for Subscribed {
    fn drop(&mut self) {
        self.0.subscribers.fetch_sub(1, Relaxed);
    }
}
