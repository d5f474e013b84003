//! Web Push's tables (embedded migration 4, PostgreSQL migration 3): the
//! VAPID key and the subscriptions, owned by Web Push through a
//! [`PushStore`]: kept in the bridge's one [`Database`] beside the
//! history, through either engine's row operations; every change noted in
//! `notify_changes` in its transaction.

use super::engine::{Engine, PushRows, Result, MAX_PUSH_TEXT, MAX_VAPID_BYTES};
use super::sql::{self, Dialect, Sql};
use super::{Database, MutexGuard, Store, StoreError};

/// The channel name the pushes' delivery rows carry.
pub const CHANNEL: &str = "push";

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

/// Web Push's key and subscriptions in the bridge's database: every call
/// is short and may block (callers run it on a blocking thread).
#[derive(Debug, Clone)]
pub struct PushStore {
    database: Database,
}

impl PushStore {
    /// Web Push's rows kept in `database`.
    pub fn new(database: Database) -> Self {
        Self { database }
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        self.database.lock()
    }

    /// The VAPID private key: `candidate` stored if there is none, then
    /// whatever is stored (so every bridge on one database signs with the
    /// same key).
    pub fn vapid_secret(&self, candidate: &[u8]) -> Result<Vec<u8>> {
        self.store().engine().vapid_secret(candidate)
    }

    /// Every stored subscription.
    pub fn load(&self) -> Result<Vec<PushRow>> {
        self.store().engine().push_subscriptions()
    }

    /// One stored subscription.
    pub fn get(&self, id: &str) -> Result<Option<PushRow>> {
        self.store().engine().push_subscription(id)
    }

    /// Adds a subscription, or replaces the one with its id if it has the
    /// same `auth` (keeping its source and creation time); false if
    /// another `auth` holds the id.
    pub fn put(&self, row: &PushRow) -> Result<bool> {
        self.store().in_transaction(|e| {
            let put = e.put_push_subscription(row)?;
            if put {
                e.note_change(CHANNEL, &row.id)?;
            }
            Ok(put)
        })
    }

    /// Removes one (only if it has `auth`, when given) and its pushes not
    /// yet sent; false if it was not there.
    pub fn delete(&self, id: &str, auth: Option<&str>) -> Result<bool> {
        self.store().in_transaction(|e| {
            let found = e.delete_push_subscription(id, auth)?;
            if found {
                e.drop_pending(id)?;
                e.note_change(CHANNEL, id)?;
            }
            Ok(found)
        })
    }

    /// Removes at most `limit` subscriptions not made or renewed since
    /// `before` (Unix ms) and their pending pushes; their ids.
    pub fn expire(&self, before: i64, limit: i64) -> Result<Vec<String>> {
        self.store().in_transaction(|e| {
            let ids = e.stale_push_ids(before, limit)?;
            remove_push(e, &ids)?;
            Ok(ids)
        })
    }

    /// Removes at most `limit` of the subscriptions made from `source` and
    /// their pending pushes; their ids.
    pub fn purge(&self, source: &str, limit: i64) -> Result<Vec<String>> {
        self.store().in_transaction(|e| {
            let ids = e.push_ids_of(source, limit)?;
            remove_push(e, &ids)?;
            Ok(ids)
        })
    }
}

/// Deletes the subscriptions `ids` and their pending pushes, noting each
/// change (inside the caller's transaction).
fn remove_push(e: &mut dyn Engine, ids: &[String]) -> Result<()> {
    for id in ids {
        if e.delete_push_subscription(id, None)? {
            e.drop_pending(id)?;
            e.note_change(CHANNEL, id)?;
        }
    }
    Ok(())
}

/// The `push_subscriptions` columns a [`PushRow`] is read from, texts cut
/// to `?1` bytes: written once for the list and the lookup by id.
macro_rules! select_push {
    () => {
        "SELECT CAST(substr(id, 1, ?1) AS TEXT), CAST(substr(subscription, 1, ?1) AS TEXT), \
         CAST(substr(watches, 1, ?1) AS TEXT), CAST(substr(source, 1, ?1) AS TEXT), \
         CAST(substr(auth, 1, ?1) AS TEXT), created_ms, updated_ms FROM push_subscriptions"
    };
}

impl<S: Sql> PushRows for S {
    fn vapid_secret(&mut self, candidate: &[u8]) -> Result<Vec<u8>> {
        self.run(sql::INSERT_VAPID, &[&candidate])?;
        let read = match S::DIALECT {
            // A text stored where the key goes reads as its bytes.
            Dialect::Sqlite => {
                "SELECT CAST(substr(secret, 1, ?1) AS BLOB) FROM push_vapid WHERE id = 1"
            }
            Dialect::Postgres => "SELECT substr(secret, 1, ?1) FROM push_vapid WHERE id = 1",
        };
        self.row(read, &[&MAX_VAPID_BYTES])?
            .ok_or_else(|| StoreError::InvalidRow {
                table: "push_vapid",
                reason: "no key after storing one".into(),
            })
    }

    fn push_subscriptions(&mut self) -> Result<Vec<PushRow>> {
        self.rows(
            concat!(select_push!(), " ORDER BY created_ms, id"),
            &[&MAX_PUSH_TEXT],
        )
    }

    fn push_subscription(&mut self, id: &str) -> Result<Option<PushRow>> {
        self.row(
            concat!(select_push!(), " WHERE id = ?2"),
            &[&MAX_PUSH_TEXT, &id],
        )
    }

    fn put_push_subscription(&mut self, row: &PushRow) -> Result<bool> {
        let n = self.run(
            sql::PUT_PUSH,
            &[
                &row.id,
                &row.subscription,
                &row.watches,
                &row.source,
                &row.auth,
                &row.created_ms,
                &row.updated_ms,
            ],
        )?;
        Ok(n > 0)
    }

    fn delete_push_subscription(&mut self, id: &str, auth: Option<&str>) -> Result<bool> {
        let n = self.run(
            "DELETE FROM push_subscriptions WHERE id = ?1 \
             AND (CAST(?2 AS TEXT) IS NULL OR auth = ?2)",
            &[&id, &auth],
        )?;
        Ok(n > 0)
    }

    fn stale_push_ids(&mut self, before: i64, limit: i64) -> Result<Vec<String>> {
        self.rows(
            "SELECT CAST(substr(id, 1, ?3) AS TEXT) FROM push_subscriptions \
             WHERE updated_ms < ?1 ORDER BY updated_ms, id LIMIT ?2",
            &[&before, &limit, &MAX_PUSH_TEXT],
        )
    }

    fn push_ids_of(&mut self, source: &str, limit: i64) -> Result<Vec<String>> {
        self.rows(
            "SELECT CAST(substr(id, 1, ?3) AS TEXT) FROM push_subscriptions \
             WHERE source = ?1 ORDER BY created_ms, id LIMIT ?2",
            &[&source, &limit, &MAX_PUSH_TEXT],
        )
    }
}

#[cfg(test)]
mod tests {
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
        let open = || PushStore::new(Database::open(Some(dir.path())).unwrap());
        let store = open();
        assert!(store.database.url().is_none(), "the embedded database");
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
