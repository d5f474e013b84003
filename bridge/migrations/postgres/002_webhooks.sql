-- Webhooks (docs/protocol.md §2.4) in PostgreSQL: the same rows as the
-- embedded database's version 3 (../003_webhooks.sql).
CREATE TABLE webhooks (
    id         TEXT    PRIMARY KEY,
    spec       TEXT    NOT NULL,
    secret     TEXT    NOT NULL,
    enabled    BOOLEAN NOT NULL,
    failures   BIGINT  NOT NULL DEFAULT 0,
    created_ms BIGINT  NOT NULL
);
