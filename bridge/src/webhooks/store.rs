//! Where webhooks are kept across restarts: the [`WebhookStore`] seam,
//! implemented by the bridge's database ([`History`], whose migrations
//! hold the `webhooks` table), so that another engine can keep them too.

use crate::history::{History, StoreError};

/// One webhook as stored: its row, not yet validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: String,
    /// The validated request, as JSON text.
    pub spec: String,
    /// `whsec_` + base64.
    pub secret: String,
    pub enabled: bool,
    pub failures: u32,
    pub created_ms: i64,
}

/// What keeps webhooks: every call is short and may block (callers run it
/// on a blocking thread).
pub trait WebhookStore: Send + Sync + std::fmt::Debug {
    /// Every stored webhook, oldest first.
    fn load(&self) -> Result<Vec<Row>, StoreError>;
    /// Adds one.
    fn insert(&self, row: &Row) -> Result<(), StoreError>;
    /// Stores a webhook's state; false if it is gone.
    fn set_state(&self, id: &str, enabled: bool, failures: u32) -> Result<bool, StoreError>;
    /// Removes one; false if it was not there.
    fn delete(&self, id: &str) -> Result<bool, StoreError>;
}

impl WebhookStore for History {
    fn load(&self) -> Result<Vec<Row>, StoreError> {
        self.store().webhooks()
    }

    fn insert(&self, row: &Row) -> Result<(), StoreError> {
        self.store().insert_webhook(row)
    }

    fn set_state(&self, id: &str, enabled: bool, failures: u32) -> Result<bool, StoreError> {
        self.store().set_webhook_state(id, enabled, failures)
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.store().delete_webhook(id)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn row(id: &str, created_ms: i64) -> Row {
        Row {
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
        store.insert(&row("wh_b", 2)).unwrap();
        store.insert(&row("wh_a", 1)).unwrap();
        assert!(store.insert(&row("wh_a", 3)).is_err(), "ids are unique");
        assert!(store.set_state("wh_b", false, 20).unwrap());
        assert!(!store.set_state("wh_gone", false, 1).unwrap());
        drop(store);
        let store = open();
        let rows = store.load().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], row("wh_a", 1), "oldest first");
        assert_eq!((rows[1].enabled, rows[1].failures), (false, 20));
        assert!(store.delete("wh_a").unwrap());
        assert!(!store.delete("wh_a").unwrap());
        assert_eq!(store.load().unwrap().len(), 1);
    }
}
