//! The PostgreSQL schema: migrations applied in order when a connection
//! opens, under a transaction-level advisory lock, so that several bridges
//! starting together on an empty database migrate it once; and the key
//! secret, created once in the database.

use postgres::Client;

use super::super::StoreError;

/// The schema, one SQL file per version, applied in order; the table
/// `lobby_schema` counts those applied. A later feature adds its tables
/// as the next file here. The runner ([`migrate`]) is the embedded
/// engine's in PostgreSQL's words, for the reasons given there
/// (`sqlite/schema.rs`): `refinery` would move the count into a table of
/// its own, and the version here is read only once this transaction holds
/// the advisory lock, so bridges starting together migrate once.
const MIGRATIONS: &[&str] = &[
    include_str!("../../../../migrations/postgres/001_history.sql"),
    include_str!("../../../../migrations/postgres/002_webhooks.sql"),
    include_str!("../../../../migrations/postgres/003_push.sql"),
    include_str!("../../../../migrations/postgres/004_updates_in_place.sql"),
    include_str!("../../../../migrations/postgres/005_hour_slots.sql"),
    include_str!("../../../../migrations/postgres/006_notify.sql"),
    include_str!("../../../../migrations/postgres/007_peaks.sql"),
    include_str!("../../../../migrations/postgres/008_cards.sql"),
    include_str!("../../../../migrations/postgres/009_card_claims.sql"),
    include_str!("../../../../migrations/postgres/010_days_by_key.sql"),
];

/// The advisory lock held while migrating ("lobby" and 1).
const MIGRATION_LOCK: i64 = 0x6c6f_6262_7900_0001;

/// Bytes of the key secret.
pub const SECRET_BYTES: usize = 32;

/// Brings the database's schema up to date; an error if it is newer than
/// this bridge's.
pub fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let mut tx = client.transaction()?;
    tx.query("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS lobby_schema (version INTEGER NOT NULL)")?;
    let version: i32 = tx
        .query_one("SELECT COALESCE(MAX(version), 0) FROM lobby_schema", &[])?
        .try_get(0)?;
    let known = MIGRATIONS.len();
    let done = usize::try_from(version).unwrap_or(usize::MAX);
    if done > known {
        return Err(StoreError::InvalidRow {
            table: "lobby_schema",
            reason: format!("its schema version {version} is newer than this bridge's ({known})"),
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(done) {
        tx.batch_execute(sql)?;
        let version = i32::try_from(i + 1).unwrap_or(i32::MAX);
        tx.execute(
            "INSERT INTO lobby_schema (version) VALUES ($1)",
            &[&version],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// The database's key secret: `candidate` stored if it has none (the first
/// bridge's), then whatever it holds read back, so every bridge gets the
/// same.
pub fn key_secret(
    client: &mut Client,
    candidate: &[u8; SECRET_BYTES],
) -> Result<[u8; SECRET_BYTES], StoreError> {
    client.execute(
        "INSERT INTO key_secret (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
        &[&&candidate[..]],
    )?;
    let row = client.query_one(
        "SELECT substring(secret from 1 for $1) FROM key_secret WHERE id = 1",
        &[&(SECRET_BYTES as i32 + 1)],
    )?;
    let bytes: Vec<u8> = row.try_get(0)?;
    <[u8; SECRET_BYTES]>::try_from(bytes.as_slice()).map_err(|_| StoreError::InvalidRow {
        table: "key_secret",
        reason: format!("{} bytes, not {SECRET_BYTES}", bytes.len()),
    })
}
