//! Where webhooks are kept: the [`WebhookStore`] seam, implemented by the
//! bridge's database ([`History`], whose migrations hold the `webhooks`
//! table and the deliveries' rows), so that another engine can keep them
//! too. Every change is noted for the other bridges on the database.

use crate::db::{
    history::History,
    store::{CardClaim, DoneDelivery, StoreError, WebhookRow},
};

/// What keeps webhooks: every call is short and may block (callers run it
/// on a blocking thread).
pub trait WebhookStore: Send + Sync + std::fmt::Debug {
    /// Every stored webhook, oldest first.
    fn load(&self) -> Result<Vec<WebhookRow>, StoreError>;
    /// One stored webhook.
    fn get(&self, id: &str) -> Result<Option<WebhookRow>, StoreError>;
    /// Adds one unless `max` are stored already; whether it was added.
    fn insert(&self, row: &WebhookRow, max: usize) -> Result<bool, StoreError>;
    /// Stores a webhook's state; false if it is gone.
    fn set_state(&self, id: &str, enabled: bool, failures: u32) -> Result<bool, StoreError>;
    /// Removes one (and its deliveries not yet sent); false if it was not
    /// there.
    fn delete(&self, id: &str) -> Result<bool, StoreError>;
    /// Its last `limit` ended deliveries, newest first.
    fn recent(&self, id: &str, limit: i64) -> Result<Vec<DoneDelivery>, StoreError>;
    /// Stores a delivery that ended at once (a test).
    fn record(&self, id: &str, done: &DoneDelivery) -> Result<(), StoreError>;
    /// Counts an ended delivery (see `Store::webhook_outcome`): its state
    /// after, `None` if it is gone.
    fn outcome(
        &self,
        id: &str,
        ok: bool,
        disable_after: u32,
    ) -> Result<Option<(bool, u32)>, StoreError>;
    /// Tries to take a status card's send slot at `now` for `lease_ms`
    /// (see `Store::claim_webhook_card`): one bridge of all on the
    /// database at a time, once per `every_ms`.
    fn claim_card(
        &self,
        id: &str,
        now: i64,
        every_ms: i64,
        lease_ms: i64,
    ) -> Result<CardClaim, StoreError>;
    /// Stores a status card's message id (`None`: post anew next) and
    /// when it was last posted or edited, giving back the slot `claim`.
    fn set_card(
        &self,
        id: &str,
        msg: Option<&str>,
        edit_ms: i64,
        claim: i64,
    ) -> Result<bool, StoreError>;
    /// Gives back the slot `claim`, nothing sent.
    fn release_card(&self, id: &str, claim: i64) -> Result<(), StoreError>;
}

impl WebhookStore for History {
    fn load(&self) -> Result<Vec<WebhookRow>, StoreError> {
        self.store().webhooks()
    }

    fn get(&self, id: &str) -> Result<Option<WebhookRow>, StoreError> {
        self.store().webhook(id)
    }

    fn insert(&self, row: &WebhookRow, max: usize) -> Result<bool, StoreError> {
        self.store().insert_webhook(row, max)
    }

    fn set_state(&self, id: &str, enabled: bool, failures: u32) -> Result<bool, StoreError> {
        self.store().set_webhook_state(id, enabled, failures)
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.store().delete_webhook(id)
    }

    fn recent(&self, id: &str, limit: i64) -> Result<Vec<DoneDelivery>, StoreError> {
        self.store().recent_deliveries(id, limit)
    }

    fn record(&self, id: &str, done: &DoneDelivery) -> Result<(), StoreError> {
        self.store().record_delivery(super::CHANNEL, id, done)
    }

    fn outcome(
        &self,
        id: &str,
        ok: bool,
        disable_after: u32,
    ) -> Result<Option<(bool, u32)>, StoreError> {
        self.store().webhook_outcome(id, ok, disable_after, true)
    }

    fn claim_card(
        &self,
        id: &str,
        now: i64,
        every_ms: i64,
        lease_ms: i64,
    ) -> Result<CardClaim, StoreError> {
        self.store().claim_webhook_card(id, now, every_ms, lease_ms)
    }

    fn set_card(
        &self,
        id: &str,
        msg: Option<&str>,
        edit_ms: i64,
        claim: i64,
    ) -> Result<bool, StoreError> {
        self.store().set_webhook_card(id, msg, edit_ms, claim)
    }

    fn release_card(&self, id: &str, claim: i64) -> Result<(), StoreError> {
        self.store().release_webhook_card(id, claim)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn row(id: &str, created_ms: i64) -> WebhookRow {
        WebhookRow {
            id: id.into(),
            spec: "{}".into(),
            secret: "whsec_AAAA".into(),
            enabled: true,
            failures: 0,
            created_ms,
        }
    }

    #[test]
    fn rows_survive_reopening_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let open = || History::open(Some(dir.path()), Duration::from_secs(60)).unwrap();
        let store = open();
        assert!(store.insert(&row("wh_b", 2), 5).unwrap());
        assert!(store.insert(&row("wh_a", 1), 5).unwrap());
        assert!(!store.insert(&row("wh_c", 1), 2).unwrap(), "at most max");
        assert!(store.insert(&row("wh_a", 3), 5).is_err(), "ids are unique");
        assert!(store.set_state("wh_b", false, 20).unwrap());
        assert!(!store.set_state("wh_gone", false, 1).unwrap());
        drop(store);
        let store = open();
        let rows = store.load().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], row("wh_a", 1), "oldest first");
        assert_eq!((rows[1].enabled, rows[1].failures), (false, 20));
        let (now, every, lease) = (100_000, 10_000, 30_000);
        let claim = now + lease;
        assert_eq!(
            store.claim_card("wh_a", now, every, lease).unwrap(),
            CardClaim::Won { msg: None, claim },
            "no card yet"
        );
        assert!(store.set_card("wh_a", Some("1234"), now, claim).unwrap());
        assert!(!store.set_card("wh_gone", Some("1"), 1, 1).unwrap());
        assert_eq!(
            store.claim_card("wh_gone", now, every, lease).unwrap(),
            CardClaim::Gone
        );
        drop(store);
        let store = open();
        assert_eq!(
            store.claim_card("wh_a", now + every, every, lease).unwrap(),
            CardClaim::Won {
                msg: Some("1234".into()),
                claim: now + every + lease
            }
        );
        assert!(store.delete("wh_a").unwrap());
        assert!(!store.delete("wh_a").unwrap());
        assert_eq!(store.load().unwrap().len(), 1);
    }
}
