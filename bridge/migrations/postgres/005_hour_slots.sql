-- An hour's row of `server_hours` keeps its size while its hour lasts
-- (the layout: ../005_hour_slots.sql): made at the server's first sample
-- of the hour with an empty slot for each sample still to come, each later
-- sample written into the first empty slot in place. A row that keeps its
-- size can be updated on its own page (HOT: no index entry, the old
-- version reclaimed by the next visit to the page) when the page has room
-- for the new version.
--
-- The rows of past hours are in this layout already (records, no empty
-- slot: they are not written again). The newest hour's rows, which the
-- next samples may still write to, get their empty slots here: as many as
-- the hour before had samples, less those of the newest hour so far,
-- never past 3,600 slots a row.
WITH newest AS (
    SELECT MAX(hour) AS hour FROM server_hours
), slots AS (
    SELECT newest.hour,
           GREATEST(COALESCE((SELECT n FROM lobby_hourly WHERE t = newest.hour - 3600000), 0)
                    - COALESCE((SELECT n FROM lobby_hourly WHERE t = newest.hour), 0), 0) AS n
    FROM newest
)
UPDATE server_hours AS h
SET samples = h.samples
    || decode(repeat('ffffffffffff', LEAST(slots.n, 3600 - length(h.samples) / 6)::integer), 'hex')
FROM slots
WHERE h.hour = slots.hour AND slots.n > 0
  AND position('\xffffffffffff'::bytea IN h.samples) = 0;
