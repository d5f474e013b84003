//! When a connection polls instead of waiting for pushes: a pure state
//! machine the socket loop drives with lists, errors and timer ticks, so
//! the rules are tested natively.
//!
//! The bridge pushes the list at once on `bridgeSubscribe` and on every
//! change. If no list came within [`PUSH_GRACE_MS`] of opening, pushes are
//! not working (an old or misconfigured bridge, a proxy that buffers), so
//! the page asks with `msQueryGameServers` every [`POLL_EVERY_MS`]. Once a
//! list arrives that no query asked for, pushes work again and polling
//! stops, so a late first push does not leave a tab polling for good.

/// If no list arrives this long after subscribing, poll instead.
pub const PUSH_GRACE_MS: f64 = 3000.0;
/// How often to poll once polling.
pub const POLL_EVERY_MS: f64 = 2000.0;
/// Unanswered queries counted at most: a bridge that answers none (master
/// down) must not make the page ignore that many pushes later.
const MAX_AWAITING: u32 = 2;

/// A change the page shows (the pill says "Live (polling)").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollChange {
    Started,
    Stopped,
}

/// One open socket's polling state.
#[derive(Debug, Clone)]
pub struct PollState {
    enabled: bool,
    opened_ms: f64,
    got_list: bool,
    polling: bool,
    /// Queries sent whose replies have not arrived.
    awaiting: u32,
    last_poll_ms: f64,
}

impl PollState {
    /// For a socket opened at `opened_ms`; `enabled: false` never polls.
    pub fn new(enabled: bool, opened_ms: f64) -> Self {
        PollState {
            enabled,
            opened_ms,
            got_list: false,
            polling: false,
            awaiting: 0,
            last_poll_ms: f64::NEG_INFINITY,
        }
    }

    pub fn is_polling(&self) -> bool {
        self.polling
    }

    /// A list arrived: the reply to a query, or a push (which ends polling).
    pub fn on_list(&mut self) -> Option<PollChange> {
        self.got_list = true;
        if self.awaiting > 0 {
            self.awaiting -= 1;
            return None;
        }
        if self.polling {
            self.polling = false;
            return Some(PollChange::Stopped);
        }
        None
    }

    /// A `bridgeError` arrived: the bridge answers a query it cannot
    /// serve with one, so no list follows for the queries sent so far.
    pub fn on_error(&mut self) {
        self.awaiting = 0;
    }

    /// The timer ticked at `now_ms`: whether to send a query now, and
    /// whether polling just started.
    pub fn on_tick(&mut self, now_ms: f64) -> (bool, Option<PollChange>) {
        let mut change = None;
        if self.enabled
            && !self.got_list
            && !self.polling
            && now_ms - self.opened_ms >= PUSH_GRACE_MS
        {
            self.polling = true;
            change = Some(PollChange::Started);
        }
        let send = self.polling && now_ms - self.last_poll_ms >= POLL_EVERY_MS;
        if send {
            self.last_poll_ms = now_ms;
            self.awaiting = (self.awaiting + 1).min(MAX_AWAITING);
        }
        (send, change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ticks every 250 ms from `from` to `to`, returning the times a
    /// query went out.
    fn run(p: &mut PollState, from: f64, to: f64) -> Vec<f64> {
        let mut sent = Vec::new();
        let mut t = from;
        while t <= to {
            if p.on_tick(t).0 {
                sent.push(t);
            }
            t += 250.0;
        }
        sent
    }

    #[test]
    fn a_pushed_first_list_means_no_polling() {
        let mut p = PollState::new(true, 0.0);
        assert_eq!(p.on_tick(1000.0), (false, None));
        assert_eq!(p.on_list(), None);
        assert!(run(&mut p, 1250.0, 20_000.0).is_empty());
        assert!(!p.is_polling());
    }

    #[test]
    fn polls_every_two_seconds_after_the_grace_period() {
        let mut p = PollState::new(true, 1000.0);
        assert!(run(&mut p, 1000.0, 3750.0).is_empty());
        assert_eq!(p.on_tick(4000.0), (true, Some(PollChange::Started)));
        assert_eq!(run(&mut p, 4250.0, 10_000.0), [6000.0, 8000.0, 10_000.0]);
        // Replies keep it polling.
        assert_eq!(p.on_list(), None);
        assert_eq!(p.on_list(), None);
        assert!(p.is_polling());
    }

    #[test]
    fn a_push_while_polling_stops_it() {
        let mut p = PollState::new(true, 0.0);
        assert_eq!(run(&mut p, 0.0, 5000.0), [3000.0, 5000.0]);
        // Two queries out, two replies in: still polling.
        assert_eq!(p.on_list(), None);
        assert_eq!(p.on_list(), None);
        assert!(p.is_polling());
        // A list nobody asked for is a push.
        assert_eq!(p.on_list(), Some(PollChange::Stopped));
        assert!(run(&mut p, 5250.0, 30_000.0).is_empty());
        // Later pushes change nothing.
        assert_eq!(p.on_list(), None);
    }

    #[test]
    fn unanswered_queries_do_not_hide_pushes_for_long() {
        let mut p = PollState::new(true, 0.0);
        // Ten queries, no replies (the master is down).
        assert_eq!(run(&mut p, 0.0, 21_000.0).len(), 10);
        assert_eq!(p.on_list(), None);
        assert_eq!(p.on_list(), None);
        assert_eq!(p.on_list(), Some(PollChange::Stopped));
        // An error clears what was awaited.
        let mut p = PollState::new(true, 0.0);
        run(&mut p, 0.0, 5000.0);
        p.on_error();
        assert_eq!(p.on_list(), Some(PollChange::Stopped));
    }

    #[test]
    fn disabled_never_polls() {
        let mut p = PollState::new(false, 0.0);
        assert!(run(&mut p, 0.0, 60_000.0).is_empty());
    }
}
