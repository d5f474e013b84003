//! The bridge's recent deltas of one epoch, and what a resubscribing client
//! must be sent to catch up.

use std::collections::VecDeque;

use super::Resume;

/// What a subscriber that asked to continue from a list must be sent.
#[derive(Debug, PartialEq, Eq)]
pub enum CatchUp<'a, T> {
    /// The whole list: another epoch, a `seq` whose deltas are gone or that
    /// is ahead of the bridge, or no list named.
    Snapshot,
    /// These deltas, oldest first (none when the client is current).
    Deltas(Vec<&'a T>),
}

/// One epoch's published sequence numbers and its most recent deltas (as
/// `T`, e.g. their encoded text), to catch resubscribing clients up.
#[derive(Debug, Clone)]
pub struct DeltaRing<T> {
    epoch: String,
    seq: u64,
    capacity: usize,
    recent: VecDeque<T>,
}

impl<T> DeltaRing<T> {
    /// An epoch with nothing published yet (`seq` 0), keeping up to
    /// `capacity` deltas.
    pub fn new(epoch: impl Into<String>, capacity: usize) -> Self {
        Self {
            epoch: epoch.into(),
            seq: 0,
            capacity: capacity.max(1),
            recent: VecDeque::with_capacity(capacity.max(1)),
        }
    }

    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    /// The newest published list's `seq` (0: none yet).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Records the delta from `seq()` to `seq() + 1`; returns the new `seq`.
    pub fn push(&mut self, delta: T) -> u64 {
        if self.recent.len() == self.capacity {
            self.recent.pop_front();
        }
        self.recent.push_back(delta);
        self.seq += 1;
        self.seq
    }

    /// The deltas after `seq` `since`, when this epoch still has them all.
    pub fn since(&self, since: u64) -> Option<Vec<&T>> {
        let missing = self.seq.checked_sub(since)?;
        let missing = usize::try_from(missing).ok()?;
        if missing > self.recent.len() {
            return None;
        }
        Some(
            self.recent
                .iter()
                .skip(self.recent.len() - missing)
                .collect(),
        )
    }

    /// What to send a subscriber that holds `resume` (see [`CatchUp`]).
    pub fn catch_up(&self, resume: Option<&Resume>) -> CatchUp<'_, T> {
        match resume {
            Some(r) if r.epoch == self.epoch => match self.since(r.since) {
                Some(deltas) => CatchUp::Deltas(deltas),
                None => CatchUp::Snapshot,
            },
            _ => CatchUp::Snapshot,
        }
    }
}
