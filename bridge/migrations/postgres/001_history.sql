-- The history in PostgreSQL (`--database-url`): the same packed layout as
-- the embedded database's version 2 (see ../002_packed_history.sql for the
-- byte formats of `samples` and `hours`), with PostgreSQL's types. Keys
-- are the 64-bit server keys stored as signed integers; every time is Unix
-- milliseconds. Applied once, under a transaction-level advisory lock, by
-- whichever bridge starts first.

-- The key secret, created once by the first bridge (insert if absent, then
-- read): every bridge on this database computes the same keys.
CREATE TABLE key_secret (
    id     SMALLINT PRIMARY KEY CHECK (id = 1),
    secret BYTEA    NOT NULL
);

-- Each server's last known state (`GET /api/servers/{key}`).
CREATE TABLE servers (
    key        BIGINT   PRIMARY KEY,
    name       TEXT     NOT NULL,
    address    TEXT,
    port       INTEGER,
    players    BIGINT   NOT NULL,
    max        SMALLINT NOT NULL,
    open       BOOLEAN  NOT NULL,
    mode       SMALLINT NOT NULL,
    first_seen BIGINT   NOT NULL,
    last_seen  BIGINT   NOT NULL
);
CREATE INDEX servers_last_seen ON servers (last_seen);

-- The lobby's totals at each sample (kept 48 hours). A row per recorded
-- sample: the row is written in the sample's transaction, so a second
-- bridge recording the same sample time finds it and records nothing.
CREATE TABLE lobby_samples (
    t       BIGINT PRIMARY KEY,
    servers BIGINT NOT NULL,
    players BIGINT NOT NULL
);
-- The lobby's sums per hour (kept 90 days) and per day (kept 2 years).
CREATE TABLE lobby_hourly (
    t           BIGINT PRIMARY KEY,
    n           BIGINT NOT NULL,
    servers_sum BIGINT NOT NULL,
    players_sum BIGINT NOT NULL
);
CREATE TABLE lobby_daily (
    t           BIGINT PRIMARY KEY,
    n           BIGINT NOT NULL,
    servers_sum BIGINT NOT NULL,
    players_sum BIGINT NOT NULL
);

-- Every sample of a server in one hour, kept 48 hours.
CREATE TABLE server_hours (
    hour    BIGINT NOT NULL,
    key     BIGINT NOT NULL,
    samples BYTEA  NOT NULL,
    PRIMARY KEY (hour, key)
);

-- A server's sums over one day (kept 2 years) and each hour's (`hours`,
-- kept 90 days, then NULL).
CREATE TABLE server_days (
    day         BIGINT   NOT NULL,
    key         BIGINT   NOT NULL,
    n           BIGINT   NOT NULL,
    players_sum BIGINT   NOT NULL,
    max         SMALLINT NOT NULL,
    open_n      BIGINT   NOT NULL,
    hours       BYTEA,
    PRIMARY KEY (day, key)
);
