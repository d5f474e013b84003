//! The notification rows (embedded migration 6, PostgreSQL migration 6)
//! for [`crate::notify`]: deliveries written with their cooldowns in one
//! transaction, claimed, settled and pruned; and the change log that
//! tells every bridge which webhooks and subscriptions to read again.

use super::engine::{ChangeRow, DeliveryRow, NewDelivery, Settle};
use super::{Store, StoreError};

impl Store {
    /// Writes one event's deliveries and their cooldowns in one
    /// transaction: how many were written (the others were written by
    /// another bridge first, are in their cooldown, or their target is
    /// behind).
    pub fn enqueue(&mut self, rows: &[NewDelivery]) -> Result<usize, StoreError> {
        self.in_transaction(|e| {
            let mut n = 0;
            for row in rows {
                n += usize::from(e.enqueue(row)?);
            }
            Ok(n)
        })
    }

    /// Takes due deliveries (see `NotifyEngine::claim`).
    pub fn claim(
        &mut self,
        now: i64,
        lease_ms: i64,
        limit: i64,
    ) -> Result<Vec<DeliveryRow>, StoreError> {
        self.engine().claim(now, lease_ms, limit)
    }

    /// Records what became of a claimed delivery.
    pub fn settle(&mut self, id: i64, how: &Settle) -> Result<(), StoreError> {
        self.engine().settle(id, how)
    }

    /// Prunes the notification rows (see `NotifyEngine::prune_notify`).
    pub fn prune_notify(
        &mut self,
        now: i64,
        before: i64,
        keep: i64,
        changes_ms: i64,
    ) -> Result<usize, StoreError> {
        self.engine().prune_notify(now, before, keep, changes_ms)
    }

    /// The database's time and the changes noted since `since`.
    pub fn changes(&mut self, since: i64, limit: i64) -> Result<(i64, Vec<ChangeRow>), StoreError> {
        self.engine().changes(since, limit)
    }

    /// The keys of `keys` the history saw since `since` (Unix ms).
    pub fn seen_since(&mut self, keys: &[i64], since: i64) -> Result<Vec<i64>, StoreError> {
        self.engine().seen_since(keys, since)
    }
}
