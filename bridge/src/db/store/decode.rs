//! The rows the engines read back, decoded once for both: each engine's
//! row gives its columns through [`Columns`], so that a row type's
//! columns and their order are written in one place instead of once per
//! engine and once per query that reads them.

use super::engine::{
    ChangeRow, DaySums, DeliveryRow, DoneDelivery, Life, LobbyBucket, Outcome, Packed, RawServer,
};
use super::{CardRow, PushRow, StoreError, WebhookRow};

/// A column type both engines' clients decode, so that a decoder written
/// once reads it from either.
pub trait Value: for<'a> postgres::types::FromSql<'a> + rusqlite::types::FromSql {}

impl<T> Value for T where T: for<'a> postgres::types::FromSql<'a> + rusqlite::types::FromSql {}

/// A row read back by either engine, one column at a time: what lets each
/// row type be decoded once for both engines.
pub trait Columns {
    /// The engine's error: rusqlite's (what its row callbacks return) or
    /// the store's (PostgreSQL's rows are read after the query).
    type Error;

    /// Column `i` as `T`, so that a wrong type or a NULL where none may
    /// be is an error, never a panic.
    fn col<T: Value>(&self, i: usize) -> Result<T, Self::Error>;
}

impl Columns for postgres::Row {
    type Error = StoreError;

    fn col<T: Value>(&self, i: usize) -> Result<T, StoreError> {
        Ok(self.try_get(i)?)
    }
}

impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;

    fn col<T: Value>(&self, i: usize) -> Result<T, rusqlite::Error> {
        self.get(i)
    }
}

/// A value read back from one row's columns, so that each engine's
/// queries name the type they read and never its columns.
pub trait Decode: Sized {
    /// The value in `r`'s columns, in the order the engines select them.
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error>;
}

/// The single column of a one-column query.
impl<T: Value> Decode for T {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        r.col(0)
    }
}

/// A count or number of failures as stored (a 64-bit integer), as a
/// `u32`: one out of range reads as the most there can be.
fn count<R: Columns>(r: &R, i: usize) -> Result<u32, R::Error> {
    Ok(u32::try_from(r.col::<i64>(i)?).unwrap_or(u32::MAX))
}

/// `key, first_seen, last_seen`.
impl Decode for Life {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(Life {
            key: r.col(0)?,
            first_seen: r.col(1)?,
            last_seen: r.col(2)?,
        })
    }
}

/// The row's hour, day or key, then its bytes.
impl Decode for Packed {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(Packed {
            at: r.col(0)?,
            bytes: r.col(1)?,
        })
    }
}

/// `t, n, servers_sum, players_sum, peak, open_n, room_n`.
impl Decode for LobbyBucket {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(LobbyBucket {
            t: r.col(0)?,
            n: r.col(1)?,
            servers_sum: r.col(2)?,
            players_sum: r.col(3)?,
            peak: r.col(4)?,
            open_n: r.col(5)?,
            room_n: r.col(6)?,
        })
    }
}

/// `name, address, port, players, max, open, mode, first_seen, last_seen`.
impl Decode for RawServer {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(RawServer {
            name: r.col(0)?,
            address: r.col(1)?,
            port: r.col(2)?,
            players: r.col(3)?,
            max: r.col(4)?,
            open: r.col(5)?,
            mode: r.col(6)?,
            first_seen: r.col(7)?,
            last_seen: r.col(8)?,
        })
    }
}

/// Server `key`'s sums of a day from `r`'s columns `first` on (`n,
/// players_sum, max, open_n, hours, peak`): the engines read the day
/// itself differently (a column, or the day probed for).
pub fn day_sums<R: Columns>(r: &R, key: i64, first: usize) -> Result<DaySums, R::Error> {
    Ok(DaySums {
        key,
        n: r.col(first)?,
        players_sum: r.col(first + 1)?,
        max: r.col(first + 2)?,
        open_n: r.col(first + 3)?,
        hours: r.col(first + 4)?,
        peak: r.col(first + 5)?,
    })
}

/// `id, spec, secret, enabled, failures, created_ms`.
impl Decode for WebhookRow {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(WebhookRow {
            id: r.col(0)?,
            spec: r.col(1)?,
            secret: r.col(2)?,
            enabled: r.col(3)?,
            failures: count(r, 4)?,
            created_ms: r.col(5)?,
        })
    }
}

/// `card_msg, card_edit_ms, card_claim_ms`.
impl Decode for CardRow {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(CardRow {
            msg: r.col(0)?,
            edit_ms: r.col(1)?,
            claim_ms: r.col(2)?,
        })
    }
}

/// `id, subscription, watches, source, auth, created_ms, updated_ms`.
impl Decode for PushRow {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(PushRow {
            id: r.col(0)?,
            subscription: r.col(1)?,
            watches: r.col(2)?,
            source: r.col(3)?,
            auth: r.col(4)?,
            created_ms: r.col(5)?,
            updated_ms: r.col(6)?,
        })
    }
}

/// `id, channel, target, msg_id, event, key, body, attempts, created_ms`.
impl Decode for DeliveryRow {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(DeliveryRow {
            id: r.col(0)?,
            channel: r.col(1)?,
            target: r.col(2)?,
            msg_id: r.col(3)?,
            event: r.col(4)?,
            key: r.col(5)?,
            body: r.col(6)?,
            attempts: r.col(7)?,
            created_ms: r.col(8)?,
        })
    }
}

/// `event, ok, status, error, attempts, done_ms`; `ok` is stored as an
/// integer, NULL read as not.
impl Decode for DoneDelivery {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(DoneDelivery {
            event: r.col(0)?,
            ok: r.col::<Option<i64>>(1)?.unwrap_or(0) != 0,
            status: r.col(2)?,
            error: r.col(3)?,
            attempts: r.col(4)?,
            done_ms: r.col(5)?,
        })
    }
}

/// `seq, kind, id`.
impl Decode for ChangeRow {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(ChangeRow {
            seq: r.col(0)?,
            kind: r.col(1)?,
            id: r.col(2)?,
        })
    }
}

/// `enabled, failures`.
impl Decode for Outcome {
    fn decode<R: Columns>(r: &R) -> Result<Self, R::Error> {
        Ok(Outcome {
            enabled: r.col(0)?,
            failures: count(r, 1)?,
        })
    }
}
