//! The notification rows (embedded migration 6, PostgreSQL migration 6)
//! for [`crate::notify`]: deliveries written with their cooldowns in one
//! transaction, claimed, settled and pruned; and the change log that
//! tells every bridge which webhooks and subscriptions to read again.
//! Written once for both engines ([`NotifyRows`] over [`Sql`]). In
//! PostgreSQL, which several bridges share, a claim takes due rows with
//! `FOR UPDATE SKIP LOCKED`, so bridges claiming at once never take the
//! same row and never wait for each other, and changes are stamped with
//! the database's clock, so bridges whose clocks differ read them alike;
//! one bridge owns an embedded file, where a claim is one `UPDATE …
//! RETURNING` (SQLite runs one writer at a time) and the clock is its
//! own. Either way a claim's lease makes a row its bridge never settled
//! (it stopped) due again.

use super::engine::{
    ChangeRow, DeliveryRow, DoneDelivery, NewDelivery, NotifyRows, Result, Settle,
    MAX_DELIVERY_TEXT,
};
use super::sql::{self, Dialect, Sql};
use super::{now_ms, Store};

/// The most bytes of a change's id read back.
const MAX_ID_TEXT: i32 = 200;

/// PostgreSQL's clock, in Unix ms.
macro_rules! db_now {
    () => {
        "(extract(epoch from clock_timestamp()) * 1000)::BIGINT"
    };
}

/// The delivery columns a [`DeliveryRow`] is read from, texts cut to `?4`.
macro_rules! delivery_columns {
    () => {
        "id, CAST(substr(channel, 1, ?4) AS TEXT), CAST(substr(target, 1, ?4) AS TEXT), \
         CAST(substr(msg_id, 1, ?4) AS TEXT), CAST(substr(event, 1, ?4) AS TEXT), key, \
         CAST(substr(body, 1, ?4) AS TEXT), attempts, created_ms"
    };
}

/// Takes the due deliveries no bridge holds, at most `?3` at `?1`, for
/// `?2` (`$lock`: how the engine keeps two bridges from taking one row).
macro_rules! claim {
    ($lock:literal) => {
        concat!(
            "UPDATE notify_deliveries SET lease_ms = ?1 + ?2, attempts = attempts + 1 \
             WHERE id IN (SELECT id FROM notify_deliveries WHERE done_ms IS NULL \
             AND due_ms <= ?1 AND (lease_ms IS NULL OR lease_ms <= ?1) ORDER BY due_ms LIMIT ?3",
            $lock,
            ") RETURNING ",
            delivery_columns!()
        )
    };
}

impl<S: Sql> NotifyRows for S {
    fn enqueue(&mut self, row: &NewDelivery) -> Result<bool> {
        let target = match row.channel {
            // `enabled` as a condition: PostgreSQL's boolean, SQLite's
            // integer (0 is false).
            "webhook" => {
                Some("SELECT count(*) FROM webhooks WHERE id = ?1 AND enabled AND enabled_ms <= ?2")
            }
            "push" => Some(sql::PUSH_TARGET_LIVE),
            _ => None,
        };
        if let Some(sql) = target {
            let n: i64 = self.row(sql, &[&row.target, &row.at_ms])?.unwrap_or(0);
            if n == 0 {
                // Deleted or disabled since this bridge read it.
                return Ok(false);
            }
        }
        if row.max_pending < i64::MAX {
            let pending: i64 = self
                .row(sql::PENDING_OF_TARGET, &[&row.target, &row.channel])?
                .unwrap_or(0);
            if pending >= row.max_pending {
                return Ok(false);
            }
        }
        let fresh = self.run(
            sql::PUT_COOLDOWN,
            &[
                &row.channel,
                &row.target,
                &row.key,
                &row.event,
                &row.until_ms,
                &row.at_ms,
                &row.dedupe_ms,
                &row.writer,
            ],
        )?;
        if fresh == 0 {
            return Ok(false);
        }
        self.run(
            sql::INSERT_DELIVERY,
            &[
                &row.channel,
                &row.target,
                &row.msg_id,
                &row.event,
                &row.key,
                &row.body,
                &row.at_ms,
            ],
        )?;
        Ok(true)
    }

    fn claim(&mut self, now: i64, lease_ms: i64, limit: i64) -> Result<Vec<DeliveryRow>> {
        let claim = match S::DIALECT {
            // One writer at a time.
            Dialect::Sqlite => claim!(""),
            // A row another bridge is taking is left to it.
            Dialect::Postgres => claim!(" FOR UPDATE SKIP LOCKED"),
        };
        self.rows(claim, &[&now, &lease_ms, &limit, &MAX_DELIVERY_TEXT])
    }

    fn settle(&mut self, id: i64, how: &Settle) -> Result<()> {
        match how {
            Settle::Retry { due_ms } => self.run(sql::SETTLE_RETRY, &[&id, due_ms])?,
            Settle::Later { due_ms } => self.run(
                "UPDATE notify_deliveries SET due_ms = ?2, lease_ms = NULL, \
                 attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END WHERE id = ?1",
                &[&id, due_ms],
            )?,
            Settle::Done(d) => self.run(
                sql::SETTLE_DONE,
                &[&id, &d.done_ms, &i64::from(d.ok), &d.status, &d.error],
            )?,
            Settle::Forget => self.run(sql::SETTLE_FORGET, &[&id])?,
        };
        Ok(())
    }

    fn record(&mut self, channel: &str, target: &str, d: &DoneDelivery) -> Result<()> {
        self.run(
            sql::RECORD_DELIVERY,
            &[
                &channel,
                &target,
                &d.event,
                &d.done_ms,
                &d.attempts,
                &i64::from(d.ok),
                &d.status,
                &d.error,
            ],
        )?;
        Ok(())
    }

    fn recent(&mut self, target: &str, limit: i64) -> Result<Vec<DoneDelivery>> {
        self.rows(
            "SELECT CAST(substr(event, 1, ?3) AS TEXT), ok, status, \
             CAST(substr(error, 1, ?3) AS TEXT), attempts, done_ms FROM notify_deliveries \
             WHERE target = ?1 AND done_ms IS NOT NULL ORDER BY done_ms DESC, id DESC LIMIT ?2",
            &[&target, &limit, &MAX_DELIVERY_TEXT],
        )
    }

    fn drop_pending(&mut self, target: &str) -> Result<usize> {
        let n = self.run(sql::DROP_PENDING, &[&target])?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn prune_notify(&mut self, now: i64, before: i64, keep: i64, changes_ms: i64) -> Result<usize> {
        let mut n = self.run(
            "DELETE FROM notify_deliveries WHERE created_ms < ?1 OR (done_ms IS NOT NULL AND id IN \
             (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY target \
               ORDER BY done_ms DESC, id DESC) AS n FROM notify_deliveries \
               WHERE done_ms IS NOT NULL) AS r WHERE n > ?2))",
            &[&before, &keep],
        )?;
        n += self.run(sql::PRUNE_COOLDOWNS, &[&now])?;
        n += match S::DIALECT {
            Dialect::Sqlite => self.run(
                "DELETE FROM notify_changes WHERE at_ms < ?1",
                &[&(now_ms() - changes_ms)],
            )?,
            Dialect::Postgres => self.run(
                concat!(
                    "DELETE FROM notify_changes WHERE at_ms < ",
                    db_now!(),
                    " - ?1"
                ),
                &[&changes_ms],
            )?,
        };
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn note_change(&mut self, kind: &str, id: &str) -> Result<()> {
        match S::DIALECT {
            Dialect::Sqlite => self.run(
                "INSERT INTO notify_changes (at_ms, kind, id) VALUES (?3, ?1, ?2)",
                &[&kind, &id, &now_ms()],
            )?,
            Dialect::Postgres => self.run(
                concat!(
                    "INSERT INTO notify_changes (at_ms, kind, id) VALUES (",
                    db_now!(),
                    ", ?1, ?2)"
                ),
                &[&kind, &id],
            )?,
        };
        Ok(())
    }

    fn changes(&mut self, since: i64, limit: i64) -> Result<(i64, Vec<ChangeRow>)> {
        let now = match S::DIALECT {
            Dialect::Sqlite => now_ms(),
            Dialect::Postgres => self.row(concat!("SELECT ", db_now!()), &[])?.unwrap_or(0),
        };
        let rows = self.rows(
            "SELECT seq, CAST(substr(kind, 1, ?3) AS TEXT), CAST(substr(id, 1, ?3) AS TEXT) \
             FROM notify_changes WHERE at_ms >= ?1 ORDER BY seq LIMIT ?2",
            &[&since, &limit, &MAX_ID_TEXT],
        )?;
        Ok((now, rows))
    }
}

impl Store {
    /// Writes one event's deliveries and their cooldowns in one
    /// transaction: how many were written (the others were written by
    /// another bridge first, are in their cooldown, or their target is
    /// behind).
    pub fn enqueue(&mut self, rows: &[NewDelivery]) -> Result<usize> {
        self.in_transaction(|e| {
            let mut n = 0;
            for row in rows {
                n += usize::from(e.enqueue(row)?);
            }
            Ok(n)
        })
    }

    /// Takes due deliveries (see `NotifyRows::claim`).
    pub fn claim(&mut self, now: i64, lease_ms: i64, limit: i64) -> Result<Vec<DeliveryRow>> {
        self.engine().claim(now, lease_ms, limit)
    }

    /// Records what became of a claimed delivery.
    pub fn settle(&mut self, id: i64, how: &Settle) -> Result<()> {
        self.engine().settle(id, how)
    }

    /// Prunes the notification rows (see `NotifyRows::prune_notify`).
    pub fn prune_notify(
        &mut self,
        now: i64,
        before: i64,
        keep: i64,
        changes_ms: i64,
    ) -> Result<usize> {
        self.engine().prune_notify(now, before, keep, changes_ms)
    }

    /// The database's time and the changes noted since `since`.
    pub fn changes(&mut self, since: i64, limit: i64) -> Result<(i64, Vec<ChangeRow>)> {
        self.engine().changes(since, limit)
    }

    /// The keys of `keys` the history saw since `since` (Unix ms).
    pub fn seen_since(&mut self, keys: &[i64], since: i64) -> Result<Vec<i64>> {
        self.engine().seen_since(keys, since)
    }
}
