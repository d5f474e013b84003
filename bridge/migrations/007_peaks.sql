-- Peaks and room (docs/protocol.md §2.6): the most players seen at one
-- sample, kept at every resolution, and how often a lobby was open with a
-- game about to start, for the week's busy hours.
--
-- `server_days.hours` records gain two fields: a record of the current
-- layout has bit 7 of its hour byte set and 14 bytes,
--   u8 hour of the day (0-23) | 0x80 | u16 samples listed |
--   u32 players summed | u8 max | u16 samples open |
--   u16 peak (the most players at one sample) |
--   u16 samples open with at least one player and a free slot;
-- a record without the bit keeps the 10-byte layout of version 2 and
-- means those two are unknown (an hour folded before this version). Both
-- are read; an hour folded again is written in the current layout.
-- `server_days.peak` is the day's peak: NULL when an hour of it is
-- unknown. A sample's own peak is its players, so the samples of the last
-- 48 hours have theirs already.
ALTER TABLE server_days ADD COLUMN peak INTEGER;

-- The lobby's peak players per hour and day, and per hour the samples in
-- which at least one server's lobby was open (`open_n`) and open with a
-- player and a free slot (`room_n`). NULL where unknown: rows recorded
-- before this version, except that a row whose samples are all still kept
-- gets its peak from them here.
ALTER TABLE lobby_hourly ADD COLUMN peak INTEGER;
ALTER TABLE lobby_hourly ADD COLUMN open_n INTEGER;
ALTER TABLE lobby_hourly ADD COLUMN room_n INTEGER;
ALTER TABLE lobby_daily ADD COLUMN peak INTEGER;
UPDATE lobby_hourly SET peak = (
    SELECT MAX(players) FROM lobby_samples s
    WHERE s.t >= lobby_hourly.t AND s.t < lobby_hourly.t + 3600000
) WHERE n = (
    SELECT COUNT(*) FROM lobby_samples s
    WHERE s.t >= lobby_hourly.t AND s.t < lobby_hourly.t + 3600000
);
UPDATE lobby_daily SET peak = (
    SELECT MAX(players) FROM lobby_samples s
    WHERE s.t >= lobby_daily.t AND s.t < lobby_daily.t + 86400000
) WHERE n = (
    SELECT COUNT(*) FROM lobby_samples s
    WHERE s.t >= lobby_daily.t AND s.t < lobby_daily.t + 86400000
);
