//! The wait between attempts to reach the master.

use std::time::Duration;

/// Reconnection delays: after a connection that worked, the first retry is
/// immediate (a lost connection is usually a blip); after that, and after
/// a master that never gave a readable answer, the wait doubles from `min`
/// to `max`.
#[derive(Debug, Clone)]
pub(super) struct Backoff {
    min: Duration,
    max: Duration,
    next: Duration,
    immediate: bool,
}

impl Backoff {
    pub(super) fn new(min: Duration, max: Duration) -> Self {
        Self {
            min,
            max,
            next: min,
            immediate: true,
        }
    }

    /// The master answered: the next failure is retried at once.
    pub(super) fn succeeded(&mut self) {
        self.next = self.min;
        self.immediate = true;
    }

    /// How long to wait after a failed attempt.
    pub(super) fn after_failure(&mut self) -> Duration {
        if std::mem::take(&mut self.immediate) {
            return Duration::ZERO;
        }
        let wait = self.next;
        self.next = (wait * 2).min(self.max);
        wait
    }

    /// How long to wait after a master that accepted the connection but
    /// never answered readably: never at once, or it becomes a busy loop.
    pub(super) fn after_no_answer(&mut self) -> Duration {
        self.immediate = false;
        self.after_failure()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_blip_is_retried_at_once_then_the_wait_doubles_to_the_cap() {
        let mut b = Backoff::new(100 * MS, 350 * MS);
        let waits: Vec<_> = (0..5).map(|_| b.after_failure()).collect();
        assert_eq!(
            waits,
            [Duration::ZERO, 100 * MS, 200 * MS, 350 * MS, 350 * MS]
        );
        b.succeeded();
        assert_eq!(b.after_failure(), Duration::ZERO);
        assert_eq!(b.after_failure(), 100 * MS);
    }

    #[test]
    fn a_master_that_never_answers_is_never_retried_at_once() {
        let mut b = Backoff::new(100 * MS, 1000 * MS);
        assert_eq!(b.after_no_answer(), 100 * MS);
        b.succeeded();
        assert_eq!(b.after_no_answer(), 100 * MS);
        assert_eq!(b.after_no_answer(), 200 * MS);
    }
}
