//! The statements both engines run as they are written here, so that
//! each is spelled once: SQLite's `?N` parameters, which the PostgreSQL
//! engine reads as its `$N` when it prepares a statement. A statement
//! the two dialects word differently stays in its engine, or is chosen
//! by [`Dialect`] where it is written. [`Sql`], the runner both engines
//! implement, is here beside them: the rows written once for both run
//! their statements through it.

use super::decode::Decode;
use super::engine::{
    Brief, Cutoffs, HistoryRows, Life, LobbyBucket, LobbyTotals, Packed, Pruned, RawServer, Result,
    MAX_HOUR_BYTES, MAX_TEXT_BYTES,
};
use super::range::Tier;

/// Which engine runs a statement: the few statements the two dialects
/// word differently are chosen by it where they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A parameter both engines' clients bind, so that a statement's
/// parameters are written once for both.
pub trait Param: postgres::types::ToSql + rusqlite::ToSql + Sync {}

impl<T> Param for T where T: postgres::types::ToSql + rusqlite::ToSql + Sync {}

/// How the row operations written once for both engines run their
/// statements: SQLite's `?N` text (which PostgreSQL prepares as `$N`),
/// parameters both bind, rows decoded once ([`Decode`]). The history's
/// rows both engines word alike ([`HistoryRows`], here), the webhooks',
/// Web Push's and the notifications' rows are written over it.
pub trait Sql {
    /// The engine's dialect.
    const DIALECT: Dialect;
    /// Runs `sql` with `params`; the rows it changed.
    fn run(&mut self, sql: &'static str, params: &[&dyn Param]) -> Result<u64>;
    /// Every row `sql` gives for `params`, decoded as `T`.
    fn rows<T: Decode>(&mut self, sql: &'static str, params: &[&dyn Param]) -> Result<Vec<T>>;
    /// The first row `sql` gives for `params`, if any, decoded as `T`.
    fn row<T: Decode>(&mut self, sql: &'static str, params: &[&dyn Param]) -> Result<Option<T>>;
}

/// Servers last seen after `(?1, ?2)` and before `?3` whose life was
/// shorter than `?4`, at most `?5`.
const BRIEF_SERVERS: &str = "SELECT key, first_seen, last_seen FROM servers \
     WHERE last_seen >= ?1 AND (last_seen > ?1 OR key > ?2) AND last_seen < ?3 \
     AND last_seen - first_seen < ?4 ORDER BY last_seen, key LIMIT ?5";

/// At most `?1` servers, the shortest life first, the newest first among
/// equals.
const LEAST_SEEN: &str = "SELECT key, first_seen, last_seen FROM servers \
     ORDER BY last_seen - first_seen, first_seen DESC, key LIMIT ?1";

/// Deletes at most `?2` rows of `$table` whose `$column` is before `?1`,
/// one range from the table's front.
#[rustfmt::skip]
macro_rules! front {
    ($table:literal, $id:literal, $column:literal) => {
        concat!(
            "DELETE FROM ", $table, " WHERE ", $id, " IN (SELECT ", $id, " FROM ", $table,
            " WHERE ", $column, " < ?1 LIMIT ?2)"
        )
    };
}

/// Retention's deletes from the front of a table, with the cutoff each
/// takes.
fn fronts(c: &Cutoffs) -> [(&'static str, i64); 4] {
    [
        (front!("lobby_samples", "t", "t"), c.lobby_samples_before),
        (front!("lobby_hourly", "t", "t"), c.lobby_hours_before),
        (front!("lobby_daily", "t", "t"), c.days_before),
        (front!("servers", "key", "last_seen"), c.days_before),
    ]
}

/// The lobby's buckets of `tier` (`?1` the step, `?2` from), sums cast
/// back to 64-bit integers, which PostgreSQL's `SUM` would widen.
fn lobby_buckets_sql(tier: Tier) -> &'static str {
    match tier {
        Tier::Samples => {
            "SELECT (t / ?1) * ?1 AS b, COUNT(*), CAST(SUM(servers) AS BIGINT), \
             CAST(SUM(players) AS BIGINT), CAST(MAX(players) AS BIGINT), CAST(NULL AS BIGINT), \
             CAST(NULL AS BIGINT) FROM lobby_samples WHERE t >= ?2 GROUP BY b ORDER BY b"
        }
        Tier::Hourly => {
            "SELECT (t / ?1) * ?1 AS b, CAST(SUM(n) AS BIGINT), CAST(SUM(servers_sum) AS BIGINT), \
             CAST(SUM(players_sum) AS BIGINT), \
             CASE WHEN COUNT(peak) = COUNT(*) THEN CAST(MAX(peak) AS BIGINT) END, \
             CASE WHEN COUNT(open_n) = COUNT(*) THEN CAST(SUM(open_n) AS BIGINT) END, \
             CASE WHEN COUNT(room_n) = COUNT(*) THEN CAST(SUM(room_n) AS BIGINT) END \
             FROM lobby_hourly WHERE t >= ?2 GROUP BY b ORDER BY b"
        }
        Tier::Daily => {
            "SELECT (t / ?1) * ?1 AS b, CAST(SUM(n) AS BIGINT), CAST(SUM(servers_sum) AS BIGINT), \
             CAST(SUM(players_sum) AS BIGINT), \
             CASE WHEN COUNT(peak) = COUNT(*) THEN CAST(MAX(peak) AS BIGINT) END, \
             CAST(NULL AS BIGINT), CAST(NULL AS BIGINT) \
             FROM lobby_daily WHERE t >= ?2 GROUP BY b ORDER BY b"
        }
    }
}

/// The lobby's sample at `?1` (servers `?2`, players `?3`), unless one
/// is stored for that time already.
const INSERT_LOBBY_SAMPLE: &str = "INSERT INTO lobby_samples (t, servers, players) \
     VALUES (?1, ?2, ?3) ON CONFLICT (t) DO NOTHING";

/// Adds one sample's totals to the lobby's hourly row `?1` (servers `?2`,
/// players `?3`, a server open `?4`, one with room `?5`). A peak or count
/// unknown for the row (recorded before them) stays unknown: the
/// comparison with a NULL is not true.
const ADD_LOBBY_HOURLY: &str = "INSERT INTO lobby_hourly AS l \
     (t, n, servers_sum, players_sum, peak, open_n, room_n) \
     VALUES (?1, 1, ?2, ?3, ?3, ?4, ?5) ON CONFLICT (t) DO UPDATE SET n = l.n + 1, \
     servers_sum = l.servers_sum + excluded.servers_sum, \
     players_sum = l.players_sum + excluded.players_sum, \
     peak = CASE WHEN excluded.peak > l.peak THEN excluded.peak ELSE l.peak END, \
     open_n = l.open_n + excluded.open_n, room_n = l.room_n + excluded.room_n";

/// Adds one sample's totals to the lobby's daily row `?1` (as
/// [`ADD_LOBBY_HOURLY`]).
const ADD_LOBBY_DAILY: &str = "INSERT INTO lobby_daily AS l \
     (t, n, servers_sum, players_sum, peak) \
     VALUES (?1, 1, ?2, ?3, ?3) ON CONFLICT (t) DO UPDATE SET n = l.n + 1, \
     servers_sum = l.servers_sum + excluded.servers_sum, \
     players_sum = l.players_sum + excluded.players_sum, \
     peak = CASE WHEN excluded.peak > l.peak THEN excluded.peak ELSE l.peak END";

/// Deletes at most `?2` hour rows at or before hour `?1`.
const PRUNE_HOURS: &str = "DELETE FROM server_hours WHERE (hour, key) IN \
     (SELECT hour, key FROM server_hours WHERE hour <= ?1 ORDER BY hour, key LIMIT ?2)";

/// Deletes at most `?2` day rows before day `?1`.
const PRUNE_DAYS: &str = "DELETE FROM server_days WHERE (day, key) IN \
     (SELECT day, key FROM server_days WHERE day < ?1 ORDER BY day, key LIMIT ?2)";

/// Drops the hourly sums of at most `?3` day rows from day `?1` to
/// before `?2`.
const DROP_DAY_HOURS: &str = "UPDATE server_days SET hours = NULL WHERE (day, key) IN \
     (SELECT day, key FROM server_days WHERE day >= ?1 AND day < ?2 \
      AND hours IS NOT NULL ORDER BY day, key LIMIT ?3)";

/// A new webhook row (`id, spec, secret, enabled, failures, created_ms`).
pub const INSERT_WEBHOOK: &str = "INSERT INTO webhooks \
     (id, spec, secret, enabled, failures, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// Webhook `?1` enabled (`?2`) with `?3` failures in a row.
pub const SET_WEBHOOK_STATE: &str = "UPDATE webhooks SET enabled = ?2, failures = ?3 WHERE id = ?1";

/// Deletes webhook `?1`.
pub const DELETE_WEBHOOK: &str = "DELETE FROM webhooks WHERE id = ?1";

/// Webhook `?1`'s card message `?2`, edited at `?3`; its send slot freed
/// if claim `?4` still holds it.
pub const SET_WEBHOOK_CARD: &str = "UPDATE webhooks SET card_msg = ?2, card_edit_ms = ?3, \
     card_claim_ms = CASE WHEN card_claim_ms = ?4 THEN 0 ELSE card_claim_ms END \
     WHERE id = ?1";

/// Frees webhook `?1`'s card send slot if claim `?2` still holds it.
pub const RELEASE_WEBHOOK_CARD: &str =
    "UPDATE webhooks SET card_claim_ms = 0 WHERE id = ?1 AND card_claim_ms = ?2";

/// Takes webhook `?1`'s card send slot until `?4` if, at `?2`, the card
/// was last posted or edited at least `?3` ago and nobody holds the slot:
/// its message (at most `?5` characters) if taken.
pub const CLAIM_WEBHOOK_CARD: &str = "UPDATE webhooks SET card_claim_ms = ?4 \
     WHERE id = ?1 AND card_edit_ms <= CAST(?2 AS BIGINT) - CAST(?3 AS BIGINT) \
     AND card_claim_ms <= ?2 RETURNING substr(card_msg, 1, ?5)";

/// Counts webhook `?1`'s ended delivery (`?2`: it went through): failures
/// in a row back to 0, or one more, disabling it at `?3`; its state after.
pub const WEBHOOK_OUTCOME: &str = "UPDATE webhooks \
     SET failures = CASE WHEN ?2 THEN 0 ELSE failures + 1 END, \
     enabled = CASE WHEN ?2 THEN enabled WHEN failures + 1 >= ?3 THEN FALSE ELSE enabled END \
     WHERE id = ?1 RETURNING enabled, failures";

/// Notes that webhook `?1` is enabled since `?2`.
pub const WEBHOOK_ENABLED_AT: &str = "UPDATE webhooks SET enabled_ms = ?2 WHERE id = ?1";

/// Stores the VAPID secret `?1` unless there is one.
pub const INSERT_VAPID: &str =
    "INSERT INTO push_vapid (id, secret) VALUES (1, ?1) ON CONFLICT (id) DO NOTHING";

/// A push subscription (`id, subscription, watches, source, auth,
/// created_ms, updated_ms`), or its renewal by a request that knows its
/// `auth`.
pub const PUT_PUSH: &str = "INSERT INTO push_subscriptions \
     (id, subscription, watches, source, auth, created_ms, updated_ms) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO UPDATE SET \
     subscription = excluded.subscription, watches = excluded.watches, \
     updated_ms = excluded.updated_ms WHERE push_subscriptions.auth = excluded.auth";

/// Whether push subscription `?1` is still there, unchanged since `?2`.
pub const PUSH_TARGET_LIVE: &str =
    "SELECT count(*) FROM push_subscriptions WHERE id = ?1 AND updated_ms <= ?2";

/// Deliveries to target `?1` on channel `?2` not done yet.
pub const PENDING_OF_TARGET: &str = "SELECT count(*) FROM notify_deliveries \
     WHERE target = ?1 AND channel = ?2 AND done_ms IS NULL";

/// A delivery's cooldown (`channel, target, key, event, until_ms`, now
/// `?6`, `dedupe_ms`, `writer`): written, or taken over once the last one
/// ran out and is this writer's or past its dedupe window; no row
/// changed means the delivery is not written.
pub const PUT_COOLDOWN: &str = "INSERT INTO notify_cooldowns \
     (channel, target, key, event, until_ms, dedupe_ms, writer) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?7, ?8) ON CONFLICT (channel, target, key, event) \
     DO UPDATE SET until_ms = excluded.until_ms, dedupe_ms = excluded.dedupe_ms, \
     writer = excluded.writer WHERE notify_cooldowns.until_ms <= ?6 \
     AND (notify_cooldowns.writer = excluded.writer OR notify_cooldowns.dedupe_ms <= ?6)";

/// A new delivery (`channel, target, msg_id, event, key, body`), due at
/// its creation `?7`.
pub const INSERT_DELIVERY: &str = "INSERT INTO notify_deliveries \
     (channel, target, msg_id, event, key, body, created_ms, due_ms) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)";

/// Delivery `?1` due again at `?2`, held by nobody.
pub const SETTLE_RETRY: &str =
    "UPDATE notify_deliveries SET due_ms = ?2, lease_ms = NULL WHERE id = ?1";

/// Delivery `?1` ended at `?2` (`ok`, `status`, `error`).
pub const SETTLE_DONE: &str = "UPDATE notify_deliveries SET done_ms = ?2, ok = ?3, status = ?4, \
     error = ?5, lease_ms = NULL WHERE id = ?1";

/// Delivery `?1` ended, nothing kept.
pub const SETTLE_FORGET: &str = "DELETE FROM notify_deliveries WHERE id = ?1";

/// A delivery that ended at once (`channel, target, event`, at `?4`,
/// `attempts, ok, status, error`).
pub const RECORD_DELIVERY: &str = "INSERT INTO notify_deliveries (channel, target, msg_id, \
     event, key, body, created_ms, due_ms, attempts, done_ms, ok, status, error) \
     VALUES (?1, ?2, '', ?3, 0, '', ?4, ?4, ?5, ?4, ?6, ?7, ?8)";

/// Drops target `?1`'s deliveries not done yet.
pub const DROP_PENDING: &str =
    "DELETE FROM notify_deliveries WHERE target = ?1 AND done_ms IS NULL";

/// Deletes the cooldowns over by `?1`.
pub const PRUNE_COOLDOWNS: &str =
    "DELETE FROM notify_cooldowns WHERE until_ms < ?1 AND dedupe_ms < ?1";

impl<S: Sql> HistoryRows for S {
    fn insert_lobby_sample(&mut self, t: i64, servers: i64, players: i64) -> Result<bool> {
        Ok(self.run(INSERT_LOBBY_SAMPLE, &[&t, &servers, &players])? == 1)
    }

    fn add_lobby_sums(&mut self, hour: i64, day: i64, totals: &LobbyTotals) -> Result<()> {
        let (servers, players) = (&totals.servers, &totals.players);
        let (open, room) = (i64::from(totals.open), i64::from(totals.room));
        self.run(ADD_LOBBY_HOURLY, &[&hour, servers, players, &open, &room])?;
        self.run(ADD_LOBBY_DAILY, &[&day, servers, players])?;
        Ok(())
    }

    fn newest_hour(&mut self) -> Result<Option<i64>> {
        Ok(self
            .row::<Option<i64>>("SELECT MAX(hour) FROM server_hours", &[])?
            .flatten())
    }

    fn first_hour(&mut self, from: i64, to: i64) -> Result<Option<i64>> {
        Ok(self
            .row::<Option<i64>>(
                "SELECT MIN(hour) FROM server_hours WHERE hour >= ?1 AND hour < ?2",
                &[&from, &to],
            )?
            .flatten())
    }

    fn hour_rows(&mut self, hour: i64, after: i64, limit: i64) -> Result<Vec<Packed>> {
        self.rows(
            "SELECT key, substr(samples, 1, ?4) FROM server_hours \
             WHERE hour = ?1 AND key > ?2 ORDER BY key LIMIT ?3",
            &[&hour, &after, &limit, &MAX_HOUR_BYTES],
        )
    }

    fn prune(&mut self, cutoffs: &Cutoffs, batch: i64) -> Result<Pruned> {
        let mut deleted = self.run(PRUNE_HOURS, &[&cutoffs.hours_through, &batch])?;
        deleted += self.run(PRUNE_DAYS, &[&cutoffs.days_before, &batch])?;
        let (from, to) = cutoffs.hours_dropped;
        let nulled = self.run(DROP_DAY_HOURS, &[&from, &to, &batch])?;
        for (delete, before) in fronts(cutoffs) {
            deleted += self.run(delete, &[&before, &batch])?;
        }
        Ok(Pruned {
            deleted: usize::try_from(deleted).unwrap_or(usize::MAX),
            nulled: usize::try_from(nulled).unwrap_or(usize::MAX),
        })
    }

    fn brief_servers(&mut self, w: &Brief) -> Result<Vec<Life>> {
        self.rows(
            BRIEF_SERVERS,
            &[&w.after.0, &w.after.1, &w.before, &w.life_ms, &w.limit],
        )
    }

    fn least_seen(&mut self, limit: i64) -> Result<Vec<Life>> {
        self.rows(LEAST_SEEN, &[&limit])
    }

    fn server(&mut self, key: i64) -> Result<Option<RawServer>> {
        let server = match S::DIALECT {
            // The numbers as stored: a text where one goes is an error
            // when decoded (a CAST would read it as 0).
            Dialect::Sqlite => {
                "SELECT CAST(substr(name, 1, ?2) AS TEXT), CAST(substr(address, 1, ?2) AS TEXT), \
                 port, players, max, open, mode, first_seen, last_seen FROM servers WHERE key = ?1"
            }
            // Widened from the columns' smaller integer types.
            Dialect::Postgres => {
                "SELECT substr(name, 1, ?2), substr(address, 1, ?2), port::bigint, players, \
                 max::bigint, open, mode::bigint, first_seen, last_seen FROM servers WHERE key = ?1"
            }
        };
        self.row(server, &[&key, &MAX_TEXT_BYTES])
    }

    fn lobby_buckets(&mut self, tier: Tier, step: i64, from: i64) -> Result<Vec<LobbyBucket>> {
        self.rows(lobby_buckets_sql(tier), &[&step, &from])
    }
}
