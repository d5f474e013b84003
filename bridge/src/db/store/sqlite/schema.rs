//! Opening the embedded database and its schema: migrations applied in
//! order at start (converting the rows of an older layout in the same
//! transaction), the size cap, and what the file takes on disk.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};

use super::super::packed::{HourSums, Sample};
use super::super::{floor, DAY_MS, HOUR_MS};
use super::Sqlite;
use crate::error::Error;

/// What brings the schema from one version to the next.
struct Migration {
    /// Its SQL file.
    sql: &'static str,
    /// Then the rows it converts (in the same transaction).
    convert: fn(&Connection) -> rusqlite::Result<()>,
}

/// The schema, one step per version, applied in order; the database's
/// `user_version` counts those applied.
///
/// Written here rather than with a migration crate, each weighed against
/// these twenty lines: `rusqlite_migration` 2.6 keeps the same
/// `user_version` and takes Rust hooks, but reads the version before its
/// (deferred) transaction, so two bridges starting on one file would both
/// run a migration (here the version is read inside an immediate
/// transaction), and it is built against rusqlite 0.40, which cannot link
/// beside our 0.43; `refinery` 0.10 counts in a table of its own (every
/// existing file counts in `user_version`) and its Rust migrations only
/// return SQL, so a step that converts rows ([`convert_v1`]) or adds a
/// column only where it is missing could not be one.
const MIGRATIONS: &[Migration] = &[
    Migration {
        sql: include_str!("../../../../migrations/001_history.sql"),
        convert: |_| Ok(()),
    },
    Migration {
        sql: include_str!("../../../../migrations/002_packed_history.sql"),
        convert: convert_v1,
    },
    Migration {
        sql: include_str!("../../../../migrations/003_webhooks.sql"),
        convert: |_| Ok(()),
    },
    Migration {
        sql: include_str!("../../../../migrations/004_push.sql"),
        convert: |_| Ok(()),
    },
    Migration {
        sql: include_str!("../../../../migrations/005_hour_slots.sql"),
        convert: |_| Ok(()),
    },
    Migration {
        sql: include_str!("../../../../migrations/006_notify.sql"),
        convert: add_enabled_ms,
    },
    Migration {
        sql: include_str!("../../../../migrations/007_peaks.sql"),
        convert: |_| Ok(()),
    },
    Migration {
        sql: include_str!("../../../../migrations/008_cards.sql"),
        convert: add_card_columns,
    },
    Migration {
        sql: include_str!("../../../../migrations/009_card_claims.sql"),
        convert: add_card_claim,
    },
];

/// The database's file in the data directory.
pub const DB_FILE: &str = "history.sqlite3";

fn db_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Database {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

/// Makes the database's file (created empty if missing: SQLite takes an
/// empty file for a new database) and its `-wal` and `-shm` files, where
/// they exist, readable by the owner only, whatever the directory's mode
/// or the process's umask: the file holds the webhooks' secrets, the VAPID
/// private key and the push subscriptions' `auth` secrets. SQLite creates
/// the `-wal` and `-shm` files with the database file's mode.
fn make_private(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)?;
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let mut shm = path.as_os_str().to_owned();
        shm.push("-shm");
        for file in [path.to_owned(), PathBuf::from(wal), PathBuf::from(shm)] {
            match std::fs::metadata(&file) {
                Ok(m) if m.permissions().mode() & 0o077 != 0 => {
                    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

impl Sqlite {
    /// Opens (or creates) the database in `dir`, in memory when `None`,
    /// and brings its schema up to date. A file that is not a database,
    /// is read-only, or comes from a newer bridge is an error here, at
    /// start, not at the first sample.
    pub fn open(dir: Option<&Path>) -> Result<Self, Error> {
        let (conn, path, file) = match dir {
            Some(dir) => {
                let path = dir.join(DB_FILE);
                make_private(&path).map_err(|e| db_error(&path, e))?;
                let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let conn =
                    Connection::open_with_flags(&path, flags).map_err(|e| db_error(&path, e))?;
                (conn, path.clone(), Some(path))
            }
            None => {
                let path = PathBuf::from(":memory:");
                let conn = Connection::open_in_memory().map_err(|e| db_error(&path, e))?;
                (conn, path, None)
            }
        };
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(true) {
            return Err(db_error(
                &path,
                "opened read-only; the bridge must be able to write it",
            ));
        }
        let mut store = Self { conn, file };
        store.prepare().map_err(|e| db_error(&path, e))?;
        Ok(store)
    }

    fn prepare(&mut self) -> Result<(), String> {
        let conn = &mut self.conn;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        // Reading the header: a file that is not a database fails here.
        let _: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(|e| e.to_string())?;
        // Under an immediate transaction: two bridges starting on one file
        // migrate it once.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| e.to_string())?;
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        let known = MIGRATIONS.len() as i64;
        if version > known {
            return Err(format!(
                "its schema version {version} is newer than this bridge's ({known})"
            ));
        }
        for (i, Migration { sql, convert }) in MIGRATIONS.iter().enumerate().skip(version as usize)
        {
            tx.execute_batch(sql)
                .and_then(|()| convert(&tx))
                .and_then(|()| tx.pragma_update(None, "user_version", (i + 1) as i64))
                .map_err(|e| format!("migration {} failed: {e}", i + 1))?;
        }
        tx.commit().map_err(|e| e.to_string())?;
        // A migration that dropped tables leaves their pages free: give
        // them back, so the file is as small as its rows (and a cap taken
        // from its size holds).
        let free: i64 = conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        if version < known && free > 0 {
            conn.execute_batch("VACUUM").map_err(|e| e.to_string())?;
        }
        // A damaged file may open and still fail on its first page read.
        let check: String = conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        if check != "ok" {
            return Err(format!("integrity check failed: {check}"));
        }
        Ok(())
    }

    /// Caps the database at about `max_bytes` (SQLite's `max_page_count`,
    /// never below what the file holds already): past it, writes fail with
    /// `SQLITE_FULL` exactly as on a full disk, while pruning still frees
    /// pages for later samples. Returns the cap in bytes as applied.
    pub fn cap(&mut self, max_bytes: u64) -> rusqlite::Result<u64> {
        let page = self.pragma("page_size")?.max(1);
        let pages = (max_bytes / page).clamp(1, i64::MAX as u64);
        let applied: i64 =
            self.conn
                .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| {
                    r.get(0)
                })?;
        Ok(applied.max(0) as u64 * page)
    }

    /// An integer pragma's value (none is negative).
    fn pragma(&self, name: &str) -> rusqlite::Result<u64> {
        let v: i64 = self
            .conn
            .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))?;
        Ok(v.max(0) as u64)
    }

    /// What the history takes on disk now: the database file (its pages,
    /// free ones included) plus its write-ahead log.
    pub fn file_bytes(&self) -> rusqlite::Result<u64> {
        let pages = self.pragma("page_count")?;
        let page = self.pragma("page_size")?;
        let wal = self.file.as_ref().map_or(0, |f| {
            let mut wal = f.clone().into_os_string();
            wal.push("-wal");
            std::fs::metadata(wal).map_or(0, |m| m.len())
        });
        Ok(pages * page + wal)
    }

    /// Copies the write-ahead log into the database file and truncates the
    /// log, so the file alone holds the history (SQLite's automatic
    /// checkpoints do this in passing; a measurement or a backup wants it
    /// done now).
    pub fn checkpoint(&self) -> rusqlite::Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
    }
}

/// Gives `webhooks` its `enabled_ms` column (migration 6) unless it has
/// it: since when each webhook is enabled.
fn add_enabled_ms(conn: &Connection) -> rusqlite::Result<()> {
    let has: i64 = conn.query_row(
        "SELECT count(*) FROM pragma_table_info('webhooks') WHERE name = 'enabled_ms'",
        [],
        |r| r.get(0),
    )?;
    if has == 0 {
        conn.execute_batch(
            "ALTER TABLE webhooks ADD COLUMN enabled_ms INTEGER NOT NULL DEFAULT 0",
        )?;
    }
    Ok(())
}

/// Adds the status card's columns to `webhooks` where they are missing
/// (`migrations/008_cards.sql`).
fn add_card_columns(conn: &Connection) -> rusqlite::Result<()> {
    add_webhook_columns(
        conn,
        &[
            ("card_msg", "ALTER TABLE webhooks ADD COLUMN card_msg TEXT"),
            (
                "card_edit_ms",
                "ALTER TABLE webhooks ADD COLUMN card_edit_ms INTEGER NOT NULL DEFAULT 0",
            ),
        ],
    )
}

/// Adds the status card's send slot to `webhooks` where it is missing
/// (`migrations/009_card_claims.sql`).
fn add_card_claim(conn: &Connection) -> rusqlite::Result<()> {
    add_webhook_columns(
        conn,
        &[(
            "card_claim_ms",
            "ALTER TABLE webhooks ADD COLUMN card_claim_ms INTEGER NOT NULL DEFAULT 0",
        )],
    )
}

/// Runs each `(column, ALTER TABLE)` pair whose column `webhooks` lacks
/// (SQLite has no `ADD COLUMN IF NOT EXISTS`, and a migration may run
/// again).
fn add_webhook_columns(conn: &Connection, columns: &[(&str, &str)]) -> rusqlite::Result<()> {
    for (column, sql) in columns {
        let has: i64 = conn.query_row(
            "SELECT count(*) FROM pragma_table_info('webhooks') WHERE name = ?1",
            [column],
            |r| r.get(0),
        )?;
        if has == 0 {
            conn.execute_batch(sql)?;
        }
    }
    Ok(())
}

/// Packs version-1 rows, read in `(key, t)` order with the key and time
/// first, into one blob per key and interval of `every` ms: `encode`
/// appends a row's record given how far into its interval it was taken,
/// and `put` stores each finished blob as `(interval start, key, blob)`.
fn pack_by(
    rows: &mut rusqlite::Rows<'_>,
    every: i64,
    put: &mut rusqlite::Statement<'_>,
    mut encode: impl FnMut(&rusqlite::Row<'_>, i64, &mut Vec<u8>) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut current: Option<(i64, i64)> = None;
    let mut blob = Vec::new();
    while let Some(r) = rows.next()? {
        let (key, t): (i64, i64) = (r.get(0)?, r.get(1)?);
        let start = floor(t, every);
        if current != Some((start, key)) {
            if let Some((s, k)) = current {
                put.execute(params![s, k, blob])?;
            }
            blob.clear();
            current = Some((start, key));
        }
        encode(r, t - start, &mut blob)?;
    }
    if let Some((s, k)) = current {
        put.execute(params![s, k, blob])?;
    }
    Ok(())
}

/// Converts the server rows of schema version 1 (one row per server per
/// sample, hour and day) into the packed rows of version 2, then drops the
/// old tables: part of migration 2, in its transaction.
fn convert_v1(conn: &Connection) -> rusqlite::Result<()> {
    {
        let mut read = conn.prepare(
            "SELECT key, t, players, max, open, mode FROM server_samples ORDER BY key, t",
        )?;
        let mut put =
            conn.prepare("INSERT INTO server_hours (hour, key, samples) VALUES (?1, ?2, ?3)")?;
        pack_by(&mut read.query([])?, HOUR_MS, &mut put, |r, since, blob| {
            let offset_s = u16::try_from(since / 1000).unwrap_or(u16::MAX);
            if !Sample::taken_at(blob, offset_s) {
                Sample {
                    offset_s,
                    players: u16::try_from(r.get::<_, i64>(2)?).unwrap_or(u16::MAX),
                    max: r.get::<_, i64>(3)?.clamp(0, 255) as u8,
                    open: r.get::<_, i64>(4)? != 0,
                    mode: r.get::<_, i64>(5)?.clamp(0, 127) as u8,
                }
                .encode(blob);
            }
            Ok(())
        })?;
    }
    conn.execute(
        "INSERT INTO server_days (day, key, n, players_sum, max, open_n, hours) \
         SELECT t, key, online_n, players_sum, max, open_n, NULL FROM server_daily",
        [],
    )?;
    {
        let mut read = conn.prepare(
            "SELECT key, t, online_n, players_sum, max, open_n FROM server_hourly ORDER BY key, t",
        )?;
        let mut put = conn.prepare(
            "INSERT INTO server_days (day, key, n, players_sum, max, open_n, hours) \
             VALUES (?1, ?2, 0, 0, 0, 0, ?3) ON CONFLICT (day, key) DO UPDATE SET hours = excluded.hours",
        )?;
        pack_by(&mut read.query([])?, DAY_MS, &mut put, |r, since, blob| {
            let sums = HourSums {
                n: u16::try_from(r.get::<_, i64>(2)?).unwrap_or(u16::MAX),
                players: u32::try_from(r.get::<_, i64>(3)?).unwrap_or(u32::MAX),
                max: r.get::<_, i64>(4)?.clamp(0, 255) as u8,
                open_n: u16::try_from(r.get::<_, i64>(5)?).unwrap_or(u16::MAX),
                peak: None,
                room_n: None,
            };
            sums.write(blob, (since / HOUR_MS) as u8);
            Ok(())
        })?;
    }
    conn.execute_batch(
        "DROP TABLE server_samples; DROP TABLE server_hourly; DROP TABLE server_daily;",
    )
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_database_and_its_wal_are_private_whatever_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().join(DB_FILE);
        let store = Sqlite::open(Some(dir.path())).unwrap();
        store
            .conn
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        for name in [DB_FILE, "history.sqlite3-wal", "history.sqlite3-shm"] {
            assert_eq!(mode(&dir.path().join(name)), 0o600, "{name}");
        }
        drop(store);
        // A file an older bridge left world-readable is made private.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let _store = Sqlite::open(Some(dir.path())).unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}
