-- The server history packed into one row per server per hour (samples) and
-- per day (hourly and daily sums), clustered by time: a sample appends to
-- one contiguous run of rows, and retention deletes a range at the front.
-- The v1 tables' rows are converted by the bridge (in the migration's
-- transaction) and the tables dropped after. Keys are the 64-bit server
-- keys stored as signed integers; `hour` and `day` are Unix milliseconds
-- of the interval's start.

-- Every sample of a server in one hour, kept 48 hours. `samples` is a run
-- of 6-byte little-endian records in the order taken:
--   u16 seconds since `hour` | u16 players (saturating) | u8 max |
--   u8 flags: bit 0 open, bits 1-7 the gameplay mode.
-- A sample without the server's record means it was offline then.
CREATE TABLE server_hours (
    hour    INTEGER NOT NULL,
    key     INTEGER NOT NULL,
    samples BLOB    NOT NULL,
    PRIMARY KEY (hour, key)
) WITHOUT ROWID;

-- A server's sums over one day: the day's (kept 2 years) and, in `hours`,
-- each hour's (kept 90 days, then NULL). An hour is folded in from
-- `server_hours` once it is over (its record replaced, the day's sums
-- recomputed from its hours, so folding twice changes nothing); the newest
-- hour of `server_hours` may not be folded yet. `hours` holds a 10-byte
-- little-endian record for each hour of the day in which the server was
-- listed, in order:
--   u8 hour of the day (0-23) | u16 samples listed | u32 players summed |
--   u8 max | u16 samples open.
CREATE TABLE server_days (
    day         INTEGER NOT NULL,
    key         INTEGER NOT NULL,
    n           INTEGER NOT NULL,
    players_sum INTEGER NOT NULL,
    max         INTEGER NOT NULL,
    open_n      INTEGER NOT NULL,
    hours       BLOB,
    PRIMARY KEY (day, key)
) WITHOUT ROWID;
