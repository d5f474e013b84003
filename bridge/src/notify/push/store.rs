//! Where Web Push keeps what must survive a restart: the [`PushStore`]
//! seam, implemented by the bridge's database ([`History`], whose
//! migrations hold the `push_vapid` and `push_subscriptions` tables), in
//! either engine.

use crate::db::{
    history::History,
    store::{PushRow, StoreError},
};

/// What keeps Web Push's key and subscriptions: every call is short and
/// may block (callers run it on a blocking thread).
pub trait PushStore: Send + Sync + std::fmt::Debug {
    /// The VAPID private key: `candidate` stored if there is none, then
    /// whatever is stored.
    fn vapid_secret(&self, candidate: &[u8]) -> Result<Vec<u8>, StoreError>;
    /// Every stored subscription.
    fn load(&self) -> Result<Vec<PushRow>, StoreError>;
    /// Adds a subscription, or replaces the one with its id if it has
    /// the same `auth` (keeping its source and creation time); false if
    /// another `auth` holds the id.
    fn put(&self, row: &PushRow) -> Result<bool, StoreError>;
    /// Removes one (only if it has `auth`, when given); false if it was
    /// not there.
    fn delete(&self, id: &str, auth: Option<&str>) -> Result<bool, StoreError>;
    /// One stored subscription.
    fn get(&self, id: &str) -> Result<Option<PushRow>, StoreError>;
    /// Removes at most `limit` subscriptions not made or renewed since
    /// `before` (Unix ms); their ids.
    fn expire(&self, before: i64, limit: i64) -> Result<Vec<String>, StoreError>;
    /// Removes at most `limit` of the subscriptions made from `source`;
    /// their ids.
    fn purge(&self, source: &str, limit: i64) -> Result<Vec<String>, StoreError>;
    /// Whether other bridges may change the rows (a shared PostgreSQL
    /// database).
    fn shared(&self) -> bool;
}

impl PushStore for History {
    fn vapid_secret(&self, candidate: &[u8]) -> Result<Vec<u8>, StoreError> {
        self.store().vapid_secret(candidate)
    }

    fn load(&self) -> Result<Vec<PushRow>, StoreError> {
        self.store().push_subscriptions()
    }

    fn put(&self, row: &PushRow) -> Result<bool, StoreError> {
        self.store().put_push_subscription(row)
    }

    fn delete(&self, id: &str, auth: Option<&str>) -> Result<bool, StoreError> {
        self.store().delete_push_subscription(id, auth)
    }

    fn get(&self, id: &str) -> Result<Option<PushRow>, StoreError> {
        self.store().push_subscription(id)
    }

    fn expire(&self, before: i64, limit: i64) -> Result<Vec<String>, StoreError> {
        self.store().expire_push_subscriptions(before, limit)
    }

    fn purge(&self, source: &str, limit: i64) -> Result<Vec<String>, StoreError> {
        self.store().purge_push_source(source, limit)
    }

    fn shared(&self) -> bool {
        self.store().postgres().is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn row(id: &str, created_ms: i64) -> PushRow {
        PushRow {
            id: id.into(),
            subscription: "{}".into(),
            watches: "[]".into(),
            source: "192.0.2.1".into(),
            auth: "secret".into(),
            created_ms,
            updated_ms: created_ms,
        }
    }

    #[test]
    fn the_key_and_rows_survive_reopening_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let open = || History::open(Some(dir.path()), Duration::from_secs(60)).unwrap();
        let store = open();
        assert!(!store.shared());
        assert_eq!(store.vapid_secret(&[1; 32]).unwrap(), vec![1; 32]);
        assert_eq!(
            store.vapid_secret(&[2; 32]).unwrap(),
            vec![1; 32],
            "created once"
        );
        assert!(store.put(&row("00000000000000bb", 2)).unwrap());
        assert!(store.put(&row("00000000000000aa", 1)).unwrap());
        let mut replaced = row("00000000000000bb", 9);
        replaced.watches = "[1]".into();
        assert!(store.put(&replaced).unwrap());
        let mut stolen = row("00000000000000bb", 10);
        stolen.auth = "another".into();
        stolen.watches = "[2]".into();
        assert!(
            !store.put(&stolen).unwrap(),
            "another auth replaces nothing"
        );
        drop(store);
        let store = open();
        assert_eq!(store.vapid_secret(&[3; 32]).unwrap(), vec![1; 32]);
        let rows = store.load().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].id, "00000000000000aa", "oldest first");
        assert_eq!(rows[1].watches, "[1]");
        assert_eq!(
            rows[1].created_ms, 2,
            "a replacement keeps its creation time"
        );
        assert!(!store.delete("00000000000000aa", Some("another")).unwrap());
        assert!(store.delete("00000000000000aa", Some("secret")).unwrap());
        assert!(!store.delete("00000000000000aa", None).unwrap());
        assert_eq!(store.load().unwrap().len(), 1);
    }
}
