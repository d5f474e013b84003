-- Web Push (docs/protocol.md §2.4) in PostgreSQL: the same rows as the
-- embedded database's version 4 (../004_push.sql). The VAPID key is
-- created once, by the first bridge, so every bridge signs with it.
CREATE TABLE push_vapid (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    secret BYTEA   NOT NULL
);

CREATE TABLE push_subscriptions (
    id           TEXT   PRIMARY KEY,
    subscription TEXT   NOT NULL,
    watches      TEXT   NOT NULL,
    source       TEXT   NOT NULL,
    auth         TEXT   NOT NULL,
    created_ms   BIGINT NOT NULL,
    updated_ms   BIGINT NOT NULL
);
CREATE INDEX push_subscriptions_updated ON push_subscriptions (updated_ms);
