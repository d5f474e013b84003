-- The player history (docs/protocol.md §2.2). Keys are the 64-bit server
-- keys stored as signed integers (the same bits); times are Unix
-- milliseconds. Server rows exist only for samples in which the server was
-- listed: a lobby sample without a server's row means it was offline.

-- Every key ever listed, with its last known state.
CREATE TABLE servers (
    key        INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    address    TEXT,
    port       INTEGER,
    players    INTEGER NOT NULL,
    max        INTEGER NOT NULL,
    open       INTEGER NOT NULL,
    mode       INTEGER NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL
);
CREATE INDEX servers_last_seen ON servers (last_seen);

-- Every sample, kept 48 hours.
CREATE TABLE lobby_samples (
    t       INTEGER PRIMARY KEY,
    servers INTEGER NOT NULL,
    players INTEGER NOT NULL
);
CREATE TABLE server_samples (
    key     INTEGER NOT NULL,
    t       INTEGER NOT NULL,
    players INTEGER NOT NULL,
    max     INTEGER NOT NULL,
    open    INTEGER NOT NULL,
    mode    INTEGER NOT NULL,
    PRIMARY KEY (key, t)
);
CREATE INDEX server_samples_t ON server_samples (t);

-- Hourly points (kept 90 days) and daily ones (kept 2 years): sums of the
-- samples in each interval, added to as samples are taken.
CREATE TABLE lobby_hourly (
    t           INTEGER PRIMARY KEY,
    n           INTEGER NOT NULL,
    servers_sum INTEGER NOT NULL,
    players_sum INTEGER NOT NULL
);
CREATE TABLE lobby_daily (
    t           INTEGER PRIMARY KEY,
    n           INTEGER NOT NULL,
    servers_sum INTEGER NOT NULL,
    players_sum INTEGER NOT NULL
);
CREATE TABLE server_hourly (
    key         INTEGER NOT NULL,
    t           INTEGER NOT NULL,
    online_n    INTEGER NOT NULL,
    players_sum INTEGER NOT NULL,
    max         INTEGER NOT NULL,
    open_n      INTEGER NOT NULL,
    PRIMARY KEY (key, t)
);
CREATE INDEX server_hourly_t ON server_hourly (t);
CREATE TABLE server_daily (
    key         INTEGER NOT NULL,
    t           INTEGER NOT NULL,
    online_n    INTEGER NOT NULL,
    players_sum INTEGER NOT NULL,
    max         INTEGER NOT NULL,
    open_n      INTEGER NOT NULL,
    PRIMARY KEY (key, t)
);
CREATE INDEX server_daily_t ON server_daily (t);
