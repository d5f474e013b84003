//! Growing from one bridge to several without losing anything: the
//! embedded database's rows (the history, the admin's webhooks with
//! their secrets, so receivers keep verifying what they get, and Web
//! Push's key and subscriptions, so browsers keep taking the pushes)
//! copied into a
//! PostgreSQL database, table by table in batches, in one transaction
//! there. Rows the database has already (a copy run twice, hours bridges
//! recorded meanwhile, a webhook created there) are kept as they are.

use postgres::types::ToSql;
use rusqlite::types::Value;

use super::{Engines, Store, StoreError};

/// Rows sent per statement.
const BATCH: usize = 5_000;

/// One table copied: its name, its columns, how PostgreSQL reads each
/// from an array (`bigint`, `text`, `bytea`, `boolean`), and its key.
struct Table {
    name: &'static str,
    columns: &'static [(&'static str, &'static str)],
    key: &'static str,
}

/// The columns of the lobby's hourly sums.
const LOBBY_HOURLY: &[(&str, &str)] = &[
    ("t", "bigint"),
    ("n", "bigint"),
    ("servers_sum", "bigint"),
    ("players_sum", "bigint"),
    ("peak", "bigint"),
    ("open_n", "bigint"),
    ("room_n", "bigint"),
];

/// The columns of the lobby's daily sums.
const LOBBY_DAILY: &[(&str, &str)] = &[
    ("t", "bigint"),
    ("n", "bigint"),
    ("servers_sum", "bigint"),
    ("players_sum", "bigint"),
    ("peak", "bigint"),
];

const TABLES: &[Table] = &[
    Table {
        name: "servers",
        columns: &[
            ("key", "bigint"),
            ("name", "text"),
            ("address", "text"),
            ("port", "bigint"),
            ("players", "bigint"),
            ("max", "bigint"),
            ("open", "boolean"),
            ("mode", "bigint"),
            ("first_seen", "bigint"),
            ("last_seen", "bigint"),
        ],
        key: "key",
    },
    Table {
        name: "lobby_samples",
        columns: &[
            ("t", "bigint"),
            ("servers", "bigint"),
            ("players", "bigint"),
        ],
        key: "t",
    },
    Table {
        name: "lobby_hourly",
        columns: LOBBY_HOURLY,
        key: "t",
    },
    Table {
        name: "lobby_daily",
        columns: LOBBY_DAILY,
        key: "t",
    },
    Table {
        name: "server_hours",
        columns: &[("hour", "bigint"), ("key", "bigint"), ("samples", "bytea")],
        key: "hour, key",
    },
    Table {
        name: "server_days",
        columns: &[
            ("day", "bigint"),
            ("key", "bigint"),
            ("n", "bigint"),
            ("players_sum", "bigint"),
            ("max", "bigint"),
            ("open_n", "bigint"),
            ("hours", "bytea"),
            ("peak", "bigint"),
        ],
        key: "day, key",
    },
    Table {
        name: "webhooks",
        columns: &[
            ("id", "text"),
            ("spec", "text"),
            ("secret", "text"),
            ("enabled", "boolean"),
            ("failures", "bigint"),
            ("created_ms", "bigint"),
        ],
        key: "id",
    },
    Table {
        name: "push_vapid",
        columns: &[("id", "bigint"), ("secret", "bytea")],
        key: "id",
    },
    Table {
        name: "push_subscriptions",
        columns: &[
            ("id", "text"),
            ("subscription", "text"),
            ("watches", "text"),
            ("source", "text"),
            ("auth", "text"),
            ("created_ms", "bigint"),
            ("updated_ms", "bigint"),
        ],
        key: "id",
    },
];

/// One column's values of a batch, as PostgreSQL arrays.
enum Column {
    Int(Vec<Option<i64>>),
    Text(Vec<Option<String>>),
    Bytes(Vec<Option<Vec<u8>>>),
    Bool(Vec<Option<bool>>),
}

impl Column {
    fn new(kind: &str) -> Self {
        match kind {
            "text" => Self::Text(Vec::new()),
            "bytea" => Self::Bytes(Vec::new()),
            "boolean" => Self::Bool(Vec::new()),
            _ => Self::Int(Vec::new()),
        }
    }

    /// Adds one SQLite value; a value of another type than the column's
    /// is an error (the file is damaged).
    fn push(&mut self, table: &'static str, v: Value) -> Result<(), StoreError> {
        let wrong = || StoreError::InvalidRow {
            table,
            reason: "a value of the wrong type".into(),
        };
        match (self, v) {
            (Self::Int(c), Value::Integer(i)) => c.push(Some(i)),
            (Self::Int(c), Value::Null) => c.push(None),
            (Self::Bool(c), Value::Integer(i)) => c.push(Some(i != 0)),
            (Self::Text(c), Value::Text(s)) => c.push(Some(s)),
            (Self::Text(c), Value::Null) => c.push(None),
            (Self::Bytes(c), Value::Blob(b)) => c.push(Some(b)),
            (Self::Bytes(c), Value::Null) => c.push(None),
            _ => return Err(wrong()),
        }
        Ok(())
    }

    fn as_sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            Self::Int(c) => c,
            Self::Text(c) => c,
            Self::Bytes(c) => c,
            Self::Bool(c) => c,
        }
    }
}

/// Copies every row of `from` (an embedded store) into `to` (a
/// PostgreSQL store), webhooks included: rows copied, per table.
pub fn copy(from: &mut Store, to: &mut Store) -> Result<Vec<(&'static str, u64)>, StoreError> {
    let (Engines::Sqlite(src), Engines::Postgres(dst)) = (&mut from.engine, &mut to.engine) else {
        return Err(StoreError::Unsupported(
            "the history is copied from the embedded database into PostgreSQL",
        ));
    };
    let client = dst.client()?;
    let mut tx = client.transaction()?;
    let mut copied = Vec::new();
    for table in TABLES {
        let names: Vec<&str> = table.columns.iter().map(|c| c.0).collect();
        let select = format!("SELECT {} FROM {}", names.join(", "), table.name);
        let arrays: Vec<String> = table
            .columns
            .iter()
            .enumerate()
            .map(|(i, (_, kind))| format!("${}::{kind}[]", i + 1))
            .collect();
        let insert = format!(
            "INSERT INTO {t} ({cols}) SELECT * FROM unnest({arrays}) ON CONFLICT ({key}) DO NOTHING",
            t = table.name,
            cols = names.join(", "),
            arrays = arrays.join(", "),
            key = table.key,
        );
        let mut read = src.conn.prepare(&select)?;
        let mut rows = read.query([])?;
        let mut batch: Vec<Column> = table.columns.iter().map(|c| Column::new(c.1)).collect();
        let (mut pending, mut total) = (0usize, 0u64);
        loop {
            let row = rows.next()?;
            if let Some(row) = row {
                for (i, column) in batch.iter_mut().enumerate() {
                    column.push(table.name, row.get::<_, Value>(i)?)?;
                }
                pending += 1;
            }
            if pending > 0 && (pending == BATCH || row.is_none()) {
                let params: Vec<&(dyn ToSql + Sync)> = batch.iter().map(Column::as_sql).collect();
                tx.execute(insert.as_str(), &params)?;
                total += pending as u64;
                pending = 0;
                batch = table.columns.iter().map(|c| Column::new(c.1)).collect();
            }
            if row.is_none() {
                break;
            }
        }
        copied.push((table.name, total));
    }
    tx.commit()?;
    Ok(copied)
}
