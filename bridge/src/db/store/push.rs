//! Web Push's tables (embedded migration 4, PostgreSQL migration 3): the
//! VAPID key and the subscriptions of [`crate::notify::push::store`], kept in the
//! bridge's database beside the history, through either engine's row
//! operations; every change noted in `notify_changes` in its transaction.

use super::engine::Engine;
use super::{Store, StoreError};

/// One subscription as stored: its row, not yet validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushRow {
    /// 16 lowercase hex digits, from the endpoint (see `push::SubId`).
    pub id: String,
    /// The browser's subscription as `PushSubscription.toJSON()` spells
    /// it.
    pub subscription: String,
    /// The validated watches, as JSON.
    pub watches: String,
    /// The network it was made from (an address, or an IPv6 /64).
    pub source: String,
    /// The subscription's `auth` secret, base64url: a row is replaced or
    /// removed only by a request that knows it.
    pub auth: String,
    pub created_ms: i64,
    pub updated_ms: i64,
}

impl Store {
    /// The VAPID private key, `candidate` stored if there is none.
    pub fn vapid_secret(&mut self, candidate: &[u8]) -> Result<Vec<u8>, StoreError> {
        self.engine().vapid_secret(candidate)
    }

    /// Every stored push subscription.
    pub fn push_subscriptions(&mut self) -> Result<Vec<PushRow>, StoreError> {
        self.engine().push_subscriptions()
    }

    /// Adds or replaces (same `auth` only) a push subscription; false if
    /// another `auth` holds it.
    pub fn put_push_subscription(&mut self, row: &PushRow) -> Result<bool, StoreError> {
        self.in_transaction(|e| {
            let put = e.put_push_subscription(row)?;
            if put {
                e.note_change("push", &row.id)?;
            }
            Ok(put)
        })
    }

    /// Removes a push subscription (with `auth`, if given); false if it
    /// was not there.
    pub fn delete_push_subscription(
        &mut self,
        id: &str,
        auth: Option<&str>,
    ) -> Result<bool, StoreError> {
        self.in_transaction(|e| {
            let found = e.delete_push_subscription(id, auth)?;
            if found {
                e.drop_pending(id)?;
                e.note_change("push", id)?;
            }
            Ok(found)
        })
    }

    /// Removes at most `limit` push subscriptions not made or renewed
    /// since `before` (Unix ms) and their pending pushes; their ids.
    pub fn expire_push_subscriptions(
        &mut self,
        before: i64,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        self.in_transaction(|e| {
            let ids = e.stale_push_ids(before, limit)?;
            remove_push(e, &ids)?;
            Ok(ids)
        })
    }

    /// Removes at most `limit` of the push subscriptions made from
    /// `source` and their pending pushes; their ids.
    pub fn purge_push_source(
        &mut self,
        source: &str,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        self.in_transaction(|e| {
            let ids = e.push_ids_of(source, limit)?;
            remove_push(e, &ids)?;
            Ok(ids)
        })
    }
}

/// Deletes the subscriptions `ids` and their pending pushes, noting each
/// change (inside the caller's transaction).
fn remove_push(e: &mut dyn Engine, ids: &[String]) -> Result<(), StoreError> {
    for id in ids {
        if e.delete_push_subscription(id, None)? {
            e.drop_pending(id)?;
            e.note_change("push", id)?;
        }
    }
    Ok(())
}
