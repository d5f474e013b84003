//! The history's SQLite file, split by job: [`schema`] opens it and
//! brings its schema up to date, [`write`] records a sample (with its
//! hourly and daily sums) and prunes in bounded batches, [`read`] answers
//! `/api/servers/{key}` and the history queries. This module holds the
//! open database and the rows that go in and come out.

mod read;
mod schema;
mod write;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::error::Error;

pub use schema::DB_FILE;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;
/// How long each tier is kept (`docs/protocol.md` §2.2).
const KEEP_SAMPLES_MS: i64 = 48 * HOUR_MS;
const KEEP_HOURLY_MS: i64 = 90 * DAY_MS;
const KEEP_DAILY_MS: i64 = 2 * 365 * DAY_MS;

/// One listed server at one sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSample {
    pub key: u64,
    pub name: String,
    pub address: Option<String>,
    pub port: Option<u16>,
    pub players: u32,
    pub max: u8,
    pub open: bool,
    pub mode: u8,
}

/// A server's last known state (`GET /api/servers/{key}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRow {
    pub sample: ServerSample,
    pub first_seen: i64,
    pub last_seen: i64,
}

/// One point of a server's history: `[t, players, max, online, open]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerPoint {
    pub t: i64,
    pub players: Option<f64>,
    pub max: Option<u32>,
    pub online: f64,
    pub open: f64,
}

/// One point of the lobby's history: `[t, servers, players]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LobbyPoint {
    pub t: i64,
    pub servers: f64,
    pub players: f64,
}

/// The open database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    /// The database's file (`None` in memory), whose `-wal` file counts
    /// towards [`Store::size_bytes`].
    file: Option<PathBuf>,
    /// Days before this have had their hourly sums dropped already, so
    /// pruning does not scan them again.
    hours_dropped_before: i64,
    /// Hours before this have been folded into `server_days`; `None` until
    /// the first write looks it up (the newest hour recorded: each write
    /// folds every hour before its own).
    folded_before: Option<i64>,
}

fn db_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Database {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

/// The start of the interval of `every` ms holding `t`.
fn floor(t: i64, every: i64) -> i64 {
    t - t.rem_euclid(every.max(1))
}
