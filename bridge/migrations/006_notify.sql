-- Every statement may run again on a database that has it (a test that
-- turns the schema's version back).
-- Notifications as rows (docs/protocol.md §2.4): one row per delivery
-- (a webhook's, a push subscription's), written in the transaction that
-- decides the event, taken by whichever bridge claims it first (a lease),
-- retried by columns (due, attempts) rather than by a task, and kept done
-- (webhooks: their last deliveries for the admin's list) until pruned.
CREATE TABLE IF NOT EXISTS notify_deliveries (
    id         INTEGER PRIMARY KEY,
    -- "webhook" or "push"
    channel    TEXT NOT NULL,
    -- the webhook's or the subscription's id
    target     TEXT NOT NULL,
    -- the webhook-id: the same on every attempt, whichever bridge sends
    msg_id     TEXT NOT NULL,
    event      TEXT NOT NULL,
    key        INTEGER NOT NULL,
    body       TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    due_ms     INTEGER NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    -- a bridge took it until then (NULL: nobody holds it)
    lease_ms   INTEGER,
    -- when it ended (NULL: not yet), and how
    done_ms    INTEGER,
    ok         INTEGER,
    status     INTEGER,
    error      TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS notify_deliveries_due ON notify_deliveries (due_ms) WHERE done_ms IS NULL;
CREATE INDEX IF NOT EXISTS notify_deliveries_target ON notify_deliveries (target, id);

-- "once per key and event per cooldown", per watch; and the bridges that
-- decide one event write it once, whichever is first: another bridge's
-- write within `dedupe_ms` is the same event (the writer's own, with a
-- cooldown of 0, is a new one).
CREATE TABLE IF NOT EXISTS notify_cooldowns (
    channel  TEXT NOT NULL,
    target   TEXT NOT NULL,
    key      INTEGER NOT NULL,
    event    TEXT NOT NULL,
    until_ms  INTEGER NOT NULL,
    dedupe_ms INTEGER NOT NULL,
    -- the bridge that wrote it (a random id per process)
    writer    TEXT NOT NULL,
    PRIMARY KEY (channel, target, key, event)
) STRICT;
CREATE INDEX IF NOT EXISTS notify_cooldowns_until ON notify_cooldowns (until_ms);
CREATE INDEX IF NOT EXISTS notify_cooldowns_dedupe ON notify_cooldowns (dedupe_ms);

-- Which webhooks and subscriptions changed, so every bridge on the
-- database reads them again within a second; pruned after a minute.
CREATE TABLE IF NOT EXISTS notify_changes (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms INTEGER NOT NULL,
    kind  TEXT NOT NULL,
    id    TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS notify_changes_at ON notify_changes (at_ms);

-- (Then `webhooks` gains `enabled_ms`, since when each webhook is enabled
-- (Unix ms): an event that happened before is not delivered to it, however
-- late a bridge writes the event. Added by the migration's code, where it
-- is missing: SQLite has no `ADD COLUMN IF NOT EXISTS`.)
