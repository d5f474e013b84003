//! The storage baseline: samples kept as a raw-sample tracker keeps them,
//! one row per listed server per sample and nothing ever folded or
//! deleted: the bridge's own samples table (same columns, same indexes:
//! what the bridge keeps for 48 h) kept for the whole span. It is written
//! for real over a shorter span, with the same synthetic servers, and
//! scaled by time (a B-tree grows in proportion to its rows).

use std::{path::Path, time::Instant};

use rusqlite::{params, Connection};

use super::synth::{lobby, sample};
use crate::error::{Error, Result};

const SCHEMA: &str = "
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE server_samples (
    key     INTEGER NOT NULL,
    t       INTEGER NOT NULL,
    players INTEGER NOT NULL,
    max     INTEGER NOT NULL,
    open    INTEGER NOT NULL,
    mode    INTEGER NOT NULL,
    PRIMARY KEY (key, t)
);
CREATE INDEX server_samples_t ON server_samples (t);
";

/// What the raw tracker's run measured.
pub(super) struct Raw {
    /// Bytes on disk after a checkpoint (file and log).
    pub(super) bytes: u64,
    /// Rows written.
    pub(super) rows: u64,
    /// Hours of samples written.
    pub(super) hours: i64,
    /// How long the writing took (seconds).
    pub(super) secs: f64,
}

/// Writes `hours` of samples every `interval_ms` for `servers` into a new
/// database in `dir`, one transaction per sample. Blocking.
pub(super) fn write(dir: &Path, servers: usize, hours: i64, interval_ms: i64) -> Result<Raw> {
    let started = Instant::now();
    let e = |e: rusqlite::Error| Error::Unexpected(format!("raw tracker: {e}"));
    std::fs::create_dir_all(dir)?;
    let path = dir.join("raw.sqlite3");
    let mut conn = Connection::open(&path).map_err(e)?;
    conn.execute_batch(SCHEMA).map_err(e)?;
    let lobby = lobby(servers);
    let end = bridge::db::store::now_ms();
    let end = end - end.rem_euclid(interval_ms);
    let start = end - hours * 3_600_000;
    let mut rows = 0u64;
    let mut t = start;
    while t < end {
        let tx = conn.transaction().map_err(e)?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO server_samples (key, t, players, max, open, mode) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(e)?;
            for s in sample(&lobby, t) {
                insert
                    .execute(params![s.key as i64, t, s.players, s.max, s.open, s.mode])
                    .map_err(e)?;
                rows += 1;
            }
        }
        tx.commit().map_err(e)?;
        t += interval_ms;
    }
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .map_err(e)?;
    drop(conn);
    let len = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let bytes = len(&path) + len(&dir.join("raw.sqlite3-wal"));
    Ok(Raw {
        bytes,
        rows,
        hours,
        secs: started.elapsed().as_secs_f64(),
    })
}
