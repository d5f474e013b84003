//! Where webhooks are kept across restarts: the [`WebhookStore`] seam, and
//! its SQLite implementation in its own file of the data directory
//! (`webhooks.sqlite3`, schema in `migrations/webhooks/`), apart from the
//! history so that either can move to another database on its own.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};

use crate::error::Error;

/// The database's file in the data directory.
pub const DB_FILE: &str = "webhooks.sqlite3";

/// The schema, one file per version, applied in order; `user_version`
/// counts those applied.
const MIGRATIONS: &[&str] = &[include_str!("../../migrations/webhooks/001_webhooks.sql")];

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
pub trait WebhookStore: Send + std::fmt::Debug {
    /// Every stored webhook.
    fn load(&mut self) -> rusqlite::Result<Vec<Row>>;
    /// Adds one.
    fn insert(&mut self, row: &Row) -> rusqlite::Result<()>;
    /// Stores a webhook's state; false if it is gone.
    fn set_state(&mut self, id: &str, enabled: bool, failures: u32) -> rusqlite::Result<bool>;
    /// Removes one; false if it was not there.
    fn delete(&mut self, id: &str) -> rusqlite::Result<bool>;
}

/// Webhooks in a SQLite file (or in memory, without a data directory).
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
}

impl SqliteStore {
    /// Opens (or creates) the file in `dir`, in memory when `None`, and
    /// brings its schema up to date; a file from a newer bridge, or one
    /// that cannot be written, is an error here, at start.
    pub fn open(dir: Option<&Path>) -> Result<Self, Error> {
        let path = dir.map_or_else(|| PathBuf::from(":memory:"), |d| d.join(DB_FILE));
        let fail = |e: &dyn std::fmt::Display| Error::Database {
            path: path.clone(),
            reason: e.to_string(),
        };
        let conn = match dir {
            Some(_) => Connection::open_with_flags(
                &path,
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            ),
            None => Connection::open_in_memory(),
        }
        .map_err(|e| fail(&e))?;
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(true) {
            return Err(fail(
                &"opened read-only; the bridge must be able to write it",
            ));
        }
        let mut store = Self { conn };
        store.migrate().map_err(|e| fail(&e))?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<(), String> {
        self.conn
            .busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        let version: usize = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .map_err(|e| e.to_string())?
            .try_into()
            .map_err(|_| "negative schema version".to_owned())?;
        if version > MIGRATIONS.len() {
            return Err(format!(
                "schema version {version} is newer than this bridge knows ({})",
                MIGRATIONS.len()
            ));
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
            let tx = self.conn.transaction().map_err(|e| e.to_string())?;
            tx.execute_batch(sql).map_err(|e| e.to_string())?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)
                .map_err(|e| e.to_string())?;
            tx.commit().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

impl WebhookStore for SqliteStore {
    fn load(&mut self) -> rusqlite::Result<Vec<Row>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, spec, secret, enabled, failures, created_ms FROM webhooks ORDER BY created_ms, id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(Row {
                id: r.get(0)?,
                spec: r.get(1)?,
                secret: r.get(2)?,
                enabled: r.get::<_, i64>(3)? != 0,
                failures: u32::try_from(r.get::<_, i64>(4)?).unwrap_or(u32::MAX),
                created_ms: r.get(5)?,
            })
        })?;
        rows.collect()
    }

    fn insert(&mut self, row: &Row) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO webhooks (id, spec, secret, enabled, failures, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![row.id, row.spec, row.secret, row.enabled, row.failures, row.created_ms],
        )?;
        Ok(())
    }

    fn set_state(&mut self, id: &str, enabled: bool, failures: u32) -> rusqlite::Result<bool> {
        let n = self.conn.execute(
            "UPDATE webhooks SET enabled = ?2, failures = ?3 WHERE id = ?1",
            params![id, enabled, failures],
        )?;
        Ok(n > 0)
    }

    fn delete(&mut self, id: &str) -> rusqlite::Result<bool> {
        let n = self
            .conn
            .execute("DELETE FROM webhooks WHERE id = ?1", params![id])?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
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
    fn rows_survive_reopening_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(Some(dir.path())).unwrap();
        store.insert(&row("wh_b", 2)).unwrap();
        store.insert(&row("wh_a", 1)).unwrap();
        assert!(store.insert(&row("wh_a", 3)).is_err(), "ids are unique");
        assert!(store.set_state("wh_b", false, 20).unwrap());
        assert!(!store.set_state("wh_gone", false, 1).unwrap());
        drop(store);
        let mut store = SqliteStore::open(Some(dir.path())).unwrap();
        let rows = store.load().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], row("wh_a", 1), "in creation order");
        assert_eq!((rows[1].enabled, rows[1].failures), (false, 20));
        assert!(store.delete("wh_a").unwrap());
        assert!(!store.delete("wh_a").unwrap());
        assert_eq!(store.load().unwrap().len(), 1);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(SqliteStore::open(Some(dir.path())).unwrap());
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        drop(conn);
        let err = SqliteStore::open(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("newer"), "{err}");
    }
}
