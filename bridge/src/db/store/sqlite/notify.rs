//! The notification rows (`notify_*`, migration 6) in the embedded
//! database. One bridge owns the file, so a claim is one `UPDATE …
//! RETURNING` (SQLite runs one writer at a time); the lease still makes a
//! claim that was never settled (the bridge stopped) due again.

use crate::db::store::{PushRow, WebhookRow};
use rusqlite::{params, OptionalExtension};

use super::super::engine::{
    ChangeRow, DeliveryRow, DoneDelivery, NewDelivery, NotifyEngine, Result, Settle,
    MAX_DELIVERY_TEXT, MAX_PUSH_TEXT, MAX_WEBHOOK_TEXT,
};
use super::Sqlite;
use crate::db::store::decode::outcome;
use crate::db::store::now_ms;
use crate::db::store::sql;

/// The most bytes of a change's id read back.
const MAX_ID_TEXT: i64 = 200;

impl NotifyEngine for Sqlite {
    fn enqueue(&mut self, row: &NewDelivery) -> Result<bool> {
        let target = match row.channel {
            "webhook" => Some(
                "SELECT count(*) FROM webhooks WHERE id = ?1 AND enabled <> 0 AND enabled_ms <= ?2",
            ),
            "push" => Some(sql::PUSH_TARGET_LIVE),
            _ => None,
        };
        if let Some(sql) = target {
            let n: i64 = self
                .conn
                .prepare_cached(sql)?
                .query_row(params![row.target, row.at_ms], |r| r.get(0))?;
            if n == 0 {
                // Deleted or disabled since this bridge read it.
                return Ok(false);
            }
        }
        if row.max_pending < i64::MAX {
            let pending: i64 = self
                .conn
                .prepare_cached(sql::PENDING_OF_TARGET)?
                .query_row(params![row.target, row.channel], |r| r.get(0))?;
            if pending >= row.max_pending {
                return Ok(false);
            }
        }
        let fresh = self
            .conn
            .prepare_cached(sql::PUT_COOLDOWN)?
            .execute(params![
                row.channel,
                row.target,
                row.key,
                row.event,
                row.until_ms,
                row.at_ms,
                row.dedupe_ms,
                row.writer
            ])?;
        if fresh == 0 {
            return Ok(false);
        }
        self.conn
            .prepare_cached(sql::INSERT_DELIVERY)?
            .execute(params![
                row.channel,
                row.target,
                row.msg_id,
                row.event,
                row.key,
                row.body,
                row.at_ms
            ])?;
        Ok(true)
    }

    fn claim(&mut self, now: i64, lease_ms: i64, limit: i64) -> Result<Vec<DeliveryRow>> {
        self.all(
            "UPDATE notify_deliveries SET lease_ms = ?1 + ?2, attempts = attempts + 1 \
             WHERE id IN (SELECT id FROM notify_deliveries WHERE done_ms IS NULL \
               AND due_ms <= ?1 AND (lease_ms IS NULL OR lease_ms <= ?1) \
               ORDER BY due_ms LIMIT ?3) \
             RETURNING id, CAST(substr(channel, 1, ?4) AS TEXT), \
               CAST(substr(target, 1, ?4) AS TEXT), CAST(substr(msg_id, 1, ?4) AS TEXT), \
               CAST(substr(event, 1, ?4) AS TEXT), key, CAST(substr(body, 1, ?4) AS TEXT), \
               attempts, created_ms",
            params![now, lease_ms, limit, MAX_DELIVERY_TEXT],
        )
    }

    fn settle(&mut self, id: i64, how: &Settle) -> Result<()> {
        match how {
            Settle::Retry { due_ms } => self
                .conn
                .prepare_cached(sql::SETTLE_RETRY)?
                .execute(params![id, due_ms])?,
            Settle::Later { due_ms } => self
                .conn
                .prepare_cached(
                    "UPDATE notify_deliveries SET due_ms = ?2, lease_ms = NULL, \
                     attempts = max(attempts - 1, 0) WHERE id = ?1",
                )?
                .execute(params![id, due_ms])?,
            Settle::Done(d) => self
                .conn
                .prepare_cached(sql::SETTLE_DONE)?
                .execute(params![id, d.done_ms, i64::from(d.ok), d.status, d.error])?,
            Settle::Forget => self
                .conn
                .prepare_cached(sql::SETTLE_FORGET)?
                .execute(params![id])?,
        };
        Ok(())
    }

    fn record(&mut self, channel: &str, target: &str, d: &DoneDelivery) -> Result<()> {
        self.conn
            .prepare_cached(sql::RECORD_DELIVERY)?
            .execute(params![
                channel,
                target,
                d.event,
                d.done_ms,
                d.attempts,
                i64::from(d.ok),
                d.status,
                d.error
            ])?;
        Ok(())
    }

    fn recent(&mut self, target: &str, limit: i64) -> Result<Vec<DoneDelivery>> {
        self.all(
            "SELECT CAST(substr(event, 1, ?3) AS TEXT), ok, status, \
             CAST(substr(error, 1, ?3) AS TEXT), attempts, done_ms FROM notify_deliveries \
             WHERE target = ?1 AND done_ms IS NOT NULL ORDER BY done_ms DESC, id DESC LIMIT ?2",
            params![target, limit, MAX_DELIVERY_TEXT],
        )
    }

    fn drop_pending(&mut self, target: &str) -> Result<usize> {
        Ok(self
            .conn
            .prepare_cached(sql::DROP_PENDING)?
            .execute(params![target])?)
    }

    fn prune_notify(&mut self, now: i64, before: i64, keep: i64, changes_ms: i64) -> Result<usize> {
        let mut n = self.conn.execute(
            "DELETE FROM notify_deliveries WHERE created_ms < ?1 OR (done_ms IS NOT NULL AND id IN \
             (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY target \
               ORDER BY done_ms DESC, id DESC) AS n FROM notify_deliveries \
               WHERE done_ms IS NOT NULL) WHERE n > ?2))",
            params![before, keep],
        )?;
        n += self.conn.execute(sql::PRUNE_COOLDOWNS, params![now])?;
        n += self.conn.execute(
            "DELETE FROM notify_changes WHERE at_ms < ?1",
            params![now_ms() - changes_ms],
        )?;
        Ok(n)
    }

    fn note_change(&mut self, kind: &str, id: &str) -> Result<()> {
        self.conn
            .prepare_cached("INSERT INTO notify_changes (at_ms, kind, id) VALUES (?1, ?2, ?3)")?
            .execute(params![now_ms(), kind, id])?;
        Ok(())
    }

    fn changes(&mut self, since: i64, limit: i64) -> Result<(i64, Vec<ChangeRow>)> {
        let now = now_ms();
        let rows = self.all(
            "SELECT seq, CAST(substr(kind, 1, ?3) AS TEXT), CAST(substr(id, 1, ?3) AS TEXT) \
             FROM notify_changes WHERE at_ms >= ?1 ORDER BY seq LIMIT ?2",
            params![since, limit, MAX_ID_TEXT],
        )?;
        Ok((now, rows))
    }

    fn webhook(&mut self, id: &str) -> Result<Option<WebhookRow>> {
        self.first(
            concat!(select_webhooks!(), " WHERE id = ?2"),
            params![MAX_WEBHOOK_TEXT, id],
        )
    }

    fn push_subscription(&mut self, id: &str) -> Result<Option<PushRow>> {
        self.first(
            concat!(select_push!(), " WHERE id = ?2"),
            params![MAX_PUSH_TEXT, id],
        )
    }

    fn seen_since(&mut self, keys: &[i64], since: i64) -> Result<Vec<i64>> {
        self.found_keys(
            "SELECT key FROM servers WHERE key = ?1 AND last_seen >= ?2",
            keys,
            |key| (key, since),
        )
    }

    fn webhook_enabled_at(&mut self, id: &str, at_ms: i64) -> Result<()> {
        self.conn
            .prepare_cached(sql::WEBHOOK_ENABLED_AT)?
            .execute(params![id, at_ms])?;
        Ok(())
    }

    fn webhook_outcome(
        &mut self,
        id: &str,
        ok: bool,
        disable_after: u32,
    ) -> Result<Option<(bool, u32)>> {
        Ok(self
            .conn
            .prepare_cached(sql::WEBHOOK_OUTCOME)?
            .query_row(params![id, ok, disable_after], |r| outcome(r))
            .optional()?)
    }
}
