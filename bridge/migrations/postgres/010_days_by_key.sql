-- A server's days by key: a server's year (`range=1y`) is one range of
-- this index instead of a probe of the primary key `(day, key)` per day
-- (365 B-tree descents). The primary key stays: the fold writes a day's
-- rows and retention deletes whole days, both by day. Only new rows and
-- versions that leave their page add entries (a fold's update that stays
-- on its page adds none), so the recorder's samples do not pay for it;
-- it takes about 30 bytes a row (110 MB at 10,000 servers × a year).
-- Built in the migration's transaction: writes to the table wait while
-- it is built.
CREATE INDEX IF NOT EXISTS server_days_by_key ON server_days (key, day);
