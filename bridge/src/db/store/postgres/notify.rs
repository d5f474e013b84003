//! The notification rows (`notify_*`, migration 6) in PostgreSQL, which
//! several bridges share: a claim takes due rows with `FOR UPDATE SKIP
//! LOCKED`, so bridges claiming at once never take the same row and never
//! wait for each other; a claim's lease makes the row due again if its
//! bridge dies before settling it. Changes are stamped with the
//! database's clock, so bridges whose clocks differ read them alike.

use super::super::engine::{
    ChangeRow, DeliveryRow, DoneDelivery, NewDelivery, NotifyEngine, Result, Settle,
    MAX_DELIVERY_TEXT, MAX_PUSH_TEXT, MAX_WEBHOOK_TEXT,
};
use super::Postgres;
use crate::db::store::decode::outcome;
use crate::db::store::sql;
use crate::db::store::{PushRow, WebhookRow};

/// The most bytes of a change's id read back.
const MAX_ID_TEXT: i32 = 200;
/// The database's clock, in Unix ms.
macro_rules! db_now {
    () => {
        "(extract(epoch from clock_timestamp()) * 1000)::BIGINT"
    };
}

impl NotifyEngine for Postgres {
    fn enqueue(&mut self, row: &NewDelivery) -> Result<bool> {
        let target = match row.channel {
            "webhook" => {
                Some("SELECT count(*) FROM webhooks WHERE id = $1 AND enabled AND enabled_ms <= $2")
            }
            "push" => Some(sql::PUSH_TARGET_LIVE),
            _ => None,
        };
        if let Some(sql) = target {
            let n: i64 = self.first(sql, &[&row.target, &row.at_ms])?.unwrap_or(0);
            if n == 0 {
                // Deleted or disabled since this bridge read it.
                return Ok(false);
            }
        }
        if row.max_pending < i64::MAX {
            let pending: i64 = self
                .first(sql::PENDING_OF_TARGET, &[&row.target, &row.channel])?
                .unwrap_or(0);
            if pending >= row.max_pending {
                return Ok(false);
            }
        }
        let fresh = self.execute(
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
        self.execute(
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
        self.all(
            "UPDATE notify_deliveries SET lease_ms = $1 + $2, attempts = attempts + 1 \
             WHERE id IN (SELECT id FROM notify_deliveries WHERE done_ms IS NULL \
               AND due_ms <= $1 AND (lease_ms IS NULL OR lease_ms <= $1) \
               ORDER BY due_ms LIMIT $3 FOR UPDATE SKIP LOCKED) \
             RETURNING id, substring(channel from 1 for $4), substring(target from 1 for $4), \
               substring(msg_id from 1 for $4), substring(event from 1 for $4), key, \
               substring(body from 1 for $4), attempts, created_ms",
            &[&now, &lease_ms, &limit, &(MAX_DELIVERY_TEXT as i32)],
        )
    }

    fn settle(&mut self, id: i64, how: &Settle) -> Result<()> {
        match how {
            Settle::Retry { due_ms } => self.execute(sql::SETTLE_RETRY, &[&id, due_ms])?,
            Settle::Later { due_ms } => self.execute(
                "UPDATE notify_deliveries SET due_ms = $2, lease_ms = NULL, \
                 attempts = GREATEST(attempts - 1, 0) WHERE id = $1",
                &[&id, due_ms],
            )?,
            Settle::Done(d) => self.execute(
                sql::SETTLE_DONE,
                &[&id, &d.done_ms, &i64::from(d.ok), &d.status, &d.error],
            )?,
            Settle::Forget => self.execute(sql::SETTLE_FORGET, &[&id])?,
        };
        Ok(())
    }

    fn record(&mut self, channel: &str, target: &str, d: &DoneDelivery) -> Result<()> {
        self.execute(
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
        self.all(
            "SELECT substring(event from 1 for $3), ok, status, substring(error from 1 for $3), \
             attempts, done_ms FROM notify_deliveries \
             WHERE target = $1 AND done_ms IS NOT NULL ORDER BY done_ms DESC, id DESC LIMIT $2",
            &[&target, &limit, &(MAX_DELIVERY_TEXT as i32)],
        )
    }

    fn drop_pending(&mut self, target: &str) -> Result<usize> {
        let n = self.execute(sql::DROP_PENDING, &[&target])?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn prune_notify(&mut self, now: i64, before: i64, keep: i64, changes_ms: i64) -> Result<usize> {
        let mut n = self.execute(
            "DELETE FROM notify_deliveries WHERE created_ms < $1 OR (done_ms IS NOT NULL AND id IN \
             (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY target \
               ORDER BY done_ms DESC, id DESC) AS n FROM notify_deliveries \
               WHERE done_ms IS NOT NULL) AS r WHERE n > $2))",
            &[&before, &keep],
        )?;
        n += self.execute(sql::PRUNE_COOLDOWNS, &[&now])?;
        n += self.execute(
            concat!(
                "DELETE FROM notify_changes WHERE at_ms < ",
                db_now!(),
                " - $1"
            ),
            &[&changes_ms],
        )?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn note_change(&mut self, kind: &str, id: &str) -> Result<()> {
        self.execute(
            concat!(
                "INSERT INTO notify_changes (at_ms, kind, id) VALUES (",
                db_now!(),
                ", $1, $2)"
            ),
            &[&kind, &id],
        )?;
        Ok(())
    }

    fn changes(&mut self, since: i64, limit: i64) -> Result<(i64, Vec<ChangeRow>)> {
        let now: i64 = self.first(concat!("SELECT ", db_now!()), &[])?.unwrap_or(0);
        let rows = self.all(
            "SELECT seq, substring(kind from 1 for $3), substring(id from 1 for $3) \
             FROM notify_changes WHERE at_ms >= $1 ORDER BY seq LIMIT $2",
            &[&since, &limit, &MAX_ID_TEXT],
        )?;
        Ok((now, rows))
    }

    fn webhook(&mut self, id: &str) -> Result<Option<WebhookRow>> {
        self.first(
            concat!(select_webhooks!(), " WHERE id = $2"),
            &[&(MAX_WEBHOOK_TEXT as i32), &id],
        )
    }

    fn push_subscription(&mut self, id: &str) -> Result<Option<PushRow>> {
        self.first(
            concat!(select_push!(), " WHERE id = $2"),
            &[&(MAX_PUSH_TEXT as i32), &id],
        )
    }

    fn seen_since(&mut self, keys: &[i64], since: i64) -> Result<Vec<i64>> {
        self.all(
            "SELECT key FROM servers WHERE key = ANY($1) AND last_seen >= $2",
            &[&keys, &since],
        )
    }

    fn webhook_enabled_at(&mut self, id: &str, at_ms: i64) -> Result<()> {
        self.execute(sql::WEBHOOK_ENABLED_AT, &[&id, &at_ms])?;
        Ok(())
    }

    fn webhook_outcome(
        &mut self,
        id: &str,
        ok: bool,
        disable_after: u32,
    ) -> Result<Option<(bool, u32)>> {
        let rows = self.query(sql::WEBHOOK_OUTCOME, &[&id, &ok, &i64::from(disable_after)])?;
        rows.first().map(outcome).transpose()
    }
}
