-- Every sample updates each listed server's `servers` row: in PostgreSQL
-- each update writes a new version of the row. Kept on the same page (a
-- HOT update: no index entry written, the old version reclaimed by the
-- next visit to the page) it costs neither index work nor lasting space;
-- that needs free room on the page (fillfactor) and no index on a column
-- the update changes. `servers_last_seen` indexed `last_seen`, which every
-- sample changes: it goes, and the two scans that used it (servers unseen
-- for two years, servers seen only briefly) read the table instead, once
-- per sample, a few milliseconds at 10,000 servers. Existing pages keep
-- their layout until rewritten; new ones leave the room.
DROP INDEX IF EXISTS servers_last_seen;
ALTER TABLE servers SET (fillfactor = 50);
