//! What a database engine does for the store: the row operations that
//! [`super::write`] and [`super::read`] are written over, once, for both
//! the embedded SQLite file ([`super::sqlite`]) and PostgreSQL
//! ([`super::postgres`]). Operations work on batches (all the servers of
//! a sample, all the hours of a window) so that PostgreSQL answers each in
//! one round trip; SQLite, in process, runs them as loops of point
//! lookups.
//!
//! Every value read back is bounded by the engine (blobs cut to the most
//! a legitimate row holds, texts to the longest a name or address can be)
//! and checked by the caller before use: a row in the database is input
//! like any other.

use std::collections::HashMap;

use super::range::Tier;
use super::{CardRow, PushRow, WebhookRow};
use super::{ServerSample, StoreError};

/// The most bytes an hour's `samples` can legitimately hold: one record a
/// second (the shortest interval) for an hour.
pub const MAX_HOUR_BYTES: i32 = 3_600 * super::packed::SAMPLE_BYTES as i32;
/// The most bytes a day's `hours` can hold: one record per hour.
pub const MAX_DAY_BYTES: i32 = 24 * super::packed::HOUR_BYTES as i32;
/// The most bytes of a server's name or address read back (a valid name
/// has at most 100 characters of at most 4 bytes, an address 253 bytes).
pub const MAX_TEXT_BYTES: i32 = 400;

/// What an operation on the store gives: its value, or why not.
pub type Result<T> = std::result::Result<T, StoreError>;

/// One server's hour or day row: its key and packed bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    /// The row's hour or day (Unix ms), or its key, as the operation says.
    pub at: i64,
    pub bytes: Vec<u8>,
}

/// A server's sums over one day, as written to `server_days`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaySums {
    pub key: i64,
    /// Samples that listed it.
    pub n: i64,
    pub players_sum: i64,
    pub max: i64,
    /// Samples in which its lobby was open.
    pub open_n: i64,
    /// The most players at one sample (`None` when an hour of the day was
    /// folded before peaks were recorded).
    pub peak: Option<i64>,
    /// Each hour's sums (`None` once dropped).
    pub hours: Option<Vec<u8>>,
}

/// A server's day row as read: when, and its sums.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayRow {
    pub day: i64,
    pub sums: DaySums,
}

/// One interval of the lobby's history: its samples and their sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LobbyBucket {
    /// The interval's start (Unix ms).
    pub t: i64,
    /// Samples taken in it.
    pub n: i64,
    pub servers_sum: i64,
    pub players_sum: i64,
    /// The most players at one sample (`None` where a row of the interval
    /// was recorded before peaks were).
    pub peak: Option<i64>,
    /// Samples in which at least one server's lobby was open (hourly
    /// rows only; `None` elsewhere and for rows older than the count).
    pub open_n: Option<i64>,
    /// Samples in which at least one server's lobby was open with a player
    /// and a free slot (as `open_n`).
    pub room_n: Option<i64>,
}

/// One sample's totals for the lobby's sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LobbyTotals {
    pub servers: i64,
    pub players: i64,
    /// At least one server's lobby was open.
    pub open: bool,
    /// At least one server's lobby was open with a player and a free slot.
    pub room: bool,
}

/// A `servers` row as the engine reads it, before it is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawServer {
    pub name: String,
    pub address: Option<String>,
    pub port: Option<i64>,
    pub players: i64,
    pub max: i64,
    pub open: bool,
    pub mode: i64,
    pub first_seen: i64,
    pub last_seen: i64,
}

/// What retention deletes: rows older than each of these (Unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cutoffs {
    /// `server_hours` rows at or before this hour.
    pub hours_through: i64,
    /// `server_days` rows, lobby days and servers unseen, before this.
    pub days_before: i64,
    /// Days from the first to before the second lose their hourly sums.
    pub hours_dropped: (i64, i64),
    /// Lobby samples before this.
    pub lobby_samples_before: i64,
    /// Lobby hours before this.
    pub lobby_hours_before: i64,
}

/// How many samples the lobby recorded in two hours.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HourCounts {
    /// In the hour before.
    pub before: i64,
    /// In the hour itself, so far.
    pub this: i64,
}

/// A server's life in the store: its key and when it was first and last
/// seen (Unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Life {
    pub key: i64,
    pub first_seen: i64,
    pub last_seen: i64,
}

/// Which servers seen only briefly to look for: at most `limit` last seen
/// after `after` (last seen, then key) and before `before` whose whole
/// life was shorter than `life_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Brief {
    pub after: (i64, i64),
    pub before: i64,
    pub life_ms: i64,
    pub limit: i64,
}

/// What forgetting servers deletes: their rows of `server_hours` and
/// `server_days` (by hour or day, and key) and of `servers`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forgotten {
    pub hours: Vec<(i64, i64)>,
    pub days: Vec<(i64, i64)>,
    pub keys: Vec<i64>,
}

/// How many rows one retention round changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Rows deleted.
    pub deleted: usize,
    /// Days whose hourly sums were dropped.
    pub nulled: usize,
}

/// The row operations of one database engine: the transactions and the
/// history's operations each engine words its own way (PostgreSQL's over
/// arrays in one statement, SQLite's a cached point statement per row).
/// Writes happen between [`Engine::begin`] and [`Engine::commit`] (or
/// [`Engine::rollback`]).
pub trait Engine:
    HistoryRows + WebhookRows + PushRows + NotifyRows + Send + std::fmt::Debug
{
    fn begin(&mut self) -> Result<()>;
    fn commit(&mut self) -> Result<()>;
    /// Abandons the open transaction (best effort: a lost connection has
    /// abandoned it already).
    fn rollback(&mut self);
    /// On an engine that makes an hour's row with empty slots for the
    /// samples still to come, so that it keeps its size: the samples
    /// recorded in the hour before `hour` and in `hour` so far (the
    /// lobby's hourly counts), which size those slots. `None` where rows
    /// hold only their records. PostgreSQL updates a row on its page (HOT),
    /// leaving room the next sample reuses, only if it keeps its size;
    /// SQLite rewrites the row's page either way, and rows that hold only
    /// their records dirty about half the pages per sample
    /// (docs/performance.md, "History").
    fn slot_counts(&mut self, _hour: i64) -> Result<Option<HourCounts>> {
        Ok(None)
    }
    /// Writes each of `records` (`at`: the key; `bytes`: one sample's
    /// record, taken `offset_s` into `hour`) into its key's `server_hours`
    /// row of `hour` as [`Sample::place`] does: into the row's first empty
    /// slot, in place; a row without one (a new row) grows by the record
    /// and `spare` empty slots. A row that holds a record taken at
    /// `offset_s` already (the same sample, written twice) is left as it
    /// is. No row is read back: PostgreSQL does it in one statement.
    ///
    /// [`Sample::place`]: packed::Sample::place
    fn append_samples(
        &mut self,
        hour: i64,
        offset_s: u16,
        spare: usize,
        records: &[Packed],
    ) -> Result<()>;
    /// Updates the servers' last known state as of `t` (first seen `t` if
    /// new).
    fn put_servers(&mut self, t: i64, servers: &[&ServerSample]) -> Result<()>;
    /// The hourly sums of `day` for `keys` (`at`: the key; absent when
    /// dropped or no row).
    fn day_hours(&mut self, day: i64, keys: &[i64]) -> Result<Vec<Packed>>;
    /// Writes the day's sums, replacing each key's.
    fn put_days(&mut self, day: i64, rows: &[DaySums]) -> Result<()>;
    /// Which of `keys` have a `servers` row.
    fn known(&mut self, keys: &[i64]) -> Result<Vec<i64>>;
    /// Deletes the rows named; how many went.
    fn forget(&mut self, rows: &Forgotten) -> Result<usize>;
    /// `key`'s `server_hours` rows of those of `hours` it has (`at`: the
    /// hour).
    fn hours_of(&mut self, key: i64, hours: &[i64]) -> Result<Vec<Packed>>;
    /// `key`'s `server_days` rows of the days from `first` through `last`
    /// (day starts), those it has: a range, so an engine with rows by key
    /// reads it in one scan.
    fn days_of(&mut self, key: i64, first: i64, last: i64) -> Result<Vec<DayRow>>;

    /// What the history takes in the database, in bytes.
    fn size_bytes(&mut self) -> Result<u64>;

    /// The keys of `keys` seen since `since` (their `servers` row's
    /// `last_seen`, Unix ms).
    fn seen_since(&mut self, keys: &[i64], since: i64) -> Result<Vec<i64>>;
}

/// The history's row operations both engines word alike, written once
/// over [`Sql`](super::sql::Sql) in [`super::sql`].
pub trait HistoryRows {
    /// Inserts the lobby's totals of the sample taken at `t` unless a row
    /// for `t` exists: `false` when it did (the sample is recorded).
    fn insert_lobby_sample(&mut self, t: i64, servers: i64, players: i64) -> Result<bool>;
    /// Adds one sample's totals to the lobby's sums of `hour` and `day`
    /// (a peak or count unknown for the row stays unknown).
    fn add_lobby_sums(&mut self, hour: i64, day: i64, totals: &LobbyTotals) -> Result<()>;
    /// The newest hour in `server_hours`.
    fn newest_hour(&mut self) -> Result<Option<i64>>;
    /// The oldest hour in `server_hours` from `from` to before `to`.
    fn first_hour(&mut self, from: i64, to: i64) -> Result<Option<i64>>;
    /// At most `limit` rows of `hour` with keys above `after`, by key (`at`:
    /// the key).
    fn hour_rows(&mut self, hour: i64, after: i64, limit: i64) -> Result<Vec<Packed>>;
    /// One retention round: at most `batch` rows of each table.
    fn prune(&mut self, cutoffs: &Cutoffs, batch: i64) -> Result<Pruned>;
    /// The servers `which` asks for, by last seen and key.
    fn brief_servers(&mut self, which: &Brief) -> Result<Vec<Life>>;
    /// At most `limit` servers, the least seen first (the shortest life),
    /// the newest first among those.
    fn least_seen(&mut self, limit: i64) -> Result<Vec<Life>>;
    /// The `servers` row of `key`.
    fn server(&mut self, key: i64) -> Result<Option<RawServer>>;
    /// The lobby's intervals of `step` from `from` on in `tier`'s table,
    /// oldest first.
    fn lobby_buckets(&mut self, tier: Tier, step: i64, from: i64) -> Result<Vec<LobbyBucket>>;
}

/// The webhooks' row operations (the `webhooks` table), written once for
/// both engines over [`Sql`](super::sql::Sql) in [`super::webhooks`].
pub trait WebhookRows {
    /// Every stored webhook, oldest first (texts cut to [`MAX_WEBHOOK_TEXT`]).
    fn webhooks(&mut self) -> Result<Vec<WebhookRow>>;
    /// One stored webhook.
    fn webhook(&mut self, id: &str) -> Result<Option<WebhookRow>>;
    /// Adds a webhook.
    fn insert_webhook(&mut self, row: &WebhookRow) -> Result<()>;
    /// Stores a webhook's state; false if it is gone.
    fn set_webhook_state(&mut self, id: &str, enabled: bool, failures: u32) -> Result<bool>;
    /// Removes a webhook; false if it was not there.
    fn delete_webhook(&mut self, id: &str) -> Result<bool>;
    /// Notes that the webhook `id` is enabled since `at_ms` (created or
    /// enabled again): earlier events are not written for it.
    fn webhook_enabled_at(&mut self, id: &str, at_ms: i64) -> Result<()>;
    /// Counts a webhook's delivery that ended (`ok` or failed): failures
    /// in a row back to 0, or one more, disabling it at `disable_after`;
    /// its state after, `None` if it is gone.
    fn webhook_outcome(
        &mut self,
        id: &str,
        ok: bool,
        disable_after: u32,
    ) -> Result<Option<Outcome>>;
    /// A status card's row (its message id: at most [`MAX_WEBHOOK_TEXT`]
    /// bytes read); `None` if the webhook is gone.
    fn webhook_card(&mut self, id: &str) -> Result<Option<CardRow>>;
    /// Takes the card's send slot until `until` in one conditional update
    /// if, at `now`, it was last posted or edited at least `every_ms` ago
    /// and nobody holds it: its message id (as [`Self::webhook_card`]
    /// reads it) if taken, `None` if not (or the webhook is gone).
    fn claim_webhook_card(
        &mut self,
        id: &str,
        now: i64,
        every_ms: i64,
        until: i64,
    ) -> Result<Option<Option<String>>>;
    /// Stores a status card's message id (`None`: post a new one next)
    /// and when it was last posted or edited, giving the slot `claim`
    /// back if it is still that; false if the webhook is gone.
    fn set_webhook_card(
        &mut self,
        id: &str,
        msg: Option<&str>,
        edit_ms: i64,
        claim: i64,
    ) -> Result<bool>;
    /// Gives the card's slot `claim` back if it is still that.
    fn release_webhook_card(&mut self, id: &str, claim: i64) -> Result<()>;
}

/// Web Push's row operations (`push_vapid`, `push_subscriptions`),
/// written once for both engines over [`Sql`](super::sql::Sql) in [`super::push`].
pub trait PushRows {
    /// The VAPID private key: `candidate` stored if there is none yet,
    /// then whatever is stored read back (at most [`MAX_VAPID_BYTES`]), so
    /// every bridge on one database signs with the same key.
    fn vapid_secret(&mut self, candidate: &[u8]) -> Result<Vec<u8>>;
    /// Every stored push subscription (texts cut to [`MAX_PUSH_TEXT`]).
    fn push_subscriptions(&mut self) -> Result<Vec<PushRow>>;
    /// One stored push subscription.
    fn push_subscription(&mut self, id: &str) -> Result<Option<PushRow>>;
    /// Adds a push subscription, or replaces the one with its id when it
    /// has the same `auth` (its `source` and `created_ms` kept); false if
    /// another `auth` holds the id (nothing written).
    fn put_push_subscription(&mut self, row: &PushRow) -> Result<bool>;
    /// Removes a push subscription (only with `auth`, when given); false
    /// if it was not there.
    fn delete_push_subscription(&mut self, id: &str, auth: Option<&str>) -> Result<bool>;
    /// The ids of at most `limit` push subscriptions not made or renewed
    /// since `before` (Unix ms), the least recently renewed first.
    fn stale_push_ids(&mut self, before: i64, limit: i64) -> Result<Vec<String>>;
    /// The ids of at most `limit` push subscriptions made from `source`.
    fn push_ids_of(&mut self, source: &str, limit: i64) -> Result<Vec<String>>;
}

/// A delivery an event makes, to be written with its cooldown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    /// `"webhook"` or `"push"`.
    pub channel: &'static str,
    /// The webhook's or subscription's id.
    pub target: String,
    /// The `webhook-id` every attempt carries.
    pub msg_id: String,
    pub event: String,
    pub key: i64,
    pub body: String,
    /// When the event was decided (Unix ms): the cooldown counts from it.
    pub at_ms: i64,
    /// The watch stays quiet on this key and event until then.
    pub until_ms: i64,
    /// Until then, the same event written by another bridge is this one.
    pub dedupe_ms: i64,
    /// The writing bridge (a random id per process).
    pub writer: String,
    /// Deliveries of the target not yet done past which this one is
    /// dropped (a receiver that is behind holds only its own).
    pub max_pending: i64,
}

/// A delivery as a bridge claims it (texts cut to [`MAX_DELIVERY_TEXT`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRow {
    pub id: i64,
    pub channel: String,
    pub target: String,
    pub msg_id: String,
    pub event: String,
    pub key: i64,
    pub body: String,
    /// Attempts started, this one included.
    pub attempts: i64,
    pub created_ms: i64,
}

/// How a delivery ended, as stored for the admin's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoneDelivery {
    pub event: String,
    pub ok: bool,
    pub status: Option<i64>,
    pub error: Option<String>,
    pub attempts: i64,
    pub done_ms: i64,
}

/// What becomes of a claimed delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settle {
    /// Due again at this time (Unix ms), held by nobody.
    Retry { due_ms: i64 },
    /// Due again at this time, held by nobody, its claim not counted as
    /// an attempt (the channel held it back: [`crate::notify::channel::Sent::Later`]).
    Later { due_ms: i64 },
    /// Ended: kept for the admin's list until pruned.
    Done(DoneDelivery),
    /// Ended: nothing kept.
    Forget,
}

/// A webhook's state after an ended delivery was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub enabled: bool,
    /// Failed deliveries in a row.
    pub failures: u32,
}

/// One change of a webhook or subscription another bridge must read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeRow {
    pub seq: i64,
    /// `"webhook"` or `"push"`.
    pub kind: String,
    pub id: String,
}

/// The notification rows' operations (`notify_*` tables), written once
/// for both engines over [`Sql`](super::sql::Sql) in [`super::notify`].
pub trait NotifyRows {
    /// Writes `row` unless its target is gone, disabled, or was enabled
    /// (a webhook) or changed (a subscription) after `at_ms`; its watch's
    /// cooldown on its key and event runs past `at_ms`; another bridge
    /// wrote the event within its `dedupe_ms`; or its target has
    /// `max_pending` deliveries not done. Whether it was written. Call
    /// inside a transaction.
    fn enqueue(&mut self, row: &NewDelivery) -> Result<bool>;
    /// Takes at most `limit` due deliveries no bridge holds, for
    /// `lease_ms` from `now`, counting the attempt.
    fn claim(&mut self, now: i64, lease_ms: i64, limit: i64) -> Result<Vec<DeliveryRow>>;
    /// Records what became of a claimed delivery.
    fn settle(&mut self, id: i64, how: &Settle) -> Result<()>;
    /// Stores a delivery that ended at once (the admin's test).
    fn record(&mut self, channel: &str, target: &str, done: &DoneDelivery) -> Result<()>;
    /// The last `limit` ended deliveries of `target`, newest first.
    fn recent(&mut self, target: &str, limit: i64) -> Result<Vec<DoneDelivery>>;
    /// Drops `target`'s deliveries not yet done (it was deleted or
    /// disabled): how many.
    fn drop_pending(&mut self, target: &str) -> Result<usize>;
    /// Deletes deliveries made before `before` and ended ones beyond
    /// `keep` per target, cooldowns over by `now`, and changes older than
    /// `changes_ms` (by the database's clock): how many rows went.
    fn prune_notify(&mut self, now: i64, before: i64, keep: i64, changes_ms: i64) -> Result<usize>;
    /// Notes that `kind`'s `id` changed (inside the change's transaction).
    fn note_change(&mut self, kind: &str, id: &str) -> Result<()>;
    /// The database's time now and the changes noted since `since` (by
    /// the database's clock), oldest first, at most `limit`.
    fn changes(&mut self, since: i64, limit: i64) -> Result<(i64, Vec<ChangeRow>)>;
}

/// The most bytes of a delivery's texts read back (a payload is far
/// smaller).
pub const MAX_DELIVERY_TEXT: i32 = 16 * 1024;

/// The most bytes of the VAPID secret read back (it has 32).
pub const MAX_VAPID_BYTES: i32 = 64;
/// The most bytes of a push subscription's texts read back (a request is
/// at most 8 KiB).
pub const MAX_PUSH_TEXT: i32 = 8 * 1024;

/// The most bytes of a webhook's texts read back (a request is at most
/// 16 KiB; an id and a secret far less).
pub const MAX_WEBHOOK_TEXT: i32 = 16 * 1024;

/// Groups `rows` by their `at`, the last of each (a engine that read them
/// in another order gives them back keyed).
pub fn by_at(rows: Vec<Packed>) -> HashMap<i64, Vec<u8>> {
    rows.into_iter().map(|p| (p.at, p.bytes)).collect()
}
