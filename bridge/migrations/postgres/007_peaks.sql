-- Peaks and room: the same as the embedded database's migration 7
-- (migrations/007_peaks.sql), which describes the layout of the hourly
-- records with peak and room in `server_days.hours`. Adding a column
-- without a default rewrites no row.
ALTER TABLE server_days ADD COLUMN peak INTEGER;

ALTER TABLE lobby_hourly ADD COLUMN peak BIGINT;
ALTER TABLE lobby_hourly ADD COLUMN open_n BIGINT;
ALTER TABLE lobby_hourly ADD COLUMN room_n BIGINT;
ALTER TABLE lobby_daily ADD COLUMN peak BIGINT;
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
