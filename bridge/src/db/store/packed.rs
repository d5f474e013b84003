//! The byte formats of the packed history rows (described in
//! `migrations/002_packed_history.sql` and, for the empty slots of an
//! hour's row, `migrations/005_hour_slots.sql`): a server's samples of one
//! hour, and its sums for each hour of one day. Packing them keeps one row
//! per server per hour or day instead of one per sample, which is what
//! makes the history small on disk and cheap to write.

/// Bytes of one sample's record in `server_hours.samples`.
pub const SAMPLE_BYTES: usize = 6;
/// An empty slot of an hour's row: room for a sample still to come. Its
/// offset (`0xFFFF`) is no sample's, since an hour has 3,600 seconds, and
/// six `0xFF` bytes in a row are found only at a slot's start (a record's
/// second byte, the offset's high one, is at most `0x0E`).
pub const EMPTY_SLOT: [u8; SAMPLE_BYTES] = [0xFF; SAMPLE_BYTES];
/// The most slots an hour's row holds: a sample a second.
pub const MAX_SLOTS: usize = 3_600;
/// Bytes of one hour's sums in `server_days.hours` (`migrations/007_peaks.sql`).
pub const HOUR_BYTES: usize = 14;
/// Bytes of one hour's sums of the older layout, without peak and room
/// (written before `migrations/007_peaks.sql`).
pub const OLD_HOUR_BYTES: usize = 10;

/// A server at one sample, as packed into its hour's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Seconds since the start of the hour.
    pub offset_s: u16,
    /// Players, saturating at `u16::MAX`.
    pub players: u16,
    pub max: u8,
    pub open: bool,
    /// The gameplay mode (7 bits).
    pub mode: u8,
}

impl Sample {
    /// Appends the record to an hour's blob.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.offset_s.to_le_bytes());
        out.extend_from_slice(&self.players.to_le_bytes());
        out.push(self.max);
        out.push(u8::from(self.open) | (self.mode << 1));
    }

    /// The records of an hour's blob, in the order they were taken; empty
    /// slots and a truncated last record are ignored.
    pub fn decode_all(blob: &[u8]) -> impl Iterator<Item = Sample> + '_ {
        blob.chunks_exact(SAMPLE_BYTES)
            .filter(|r| r != &EMPTY_SLOT)
            .map(|r| Sample {
                offset_s: u16::from_le_bytes([r[0], r[1]]),
                players: u16::from_le_bytes([r[2], r[3]]),
                max: r[4],
                open: r[5] & 1 != 0,
                mode: r[5] >> 1,
            })
    }

    /// Whether the blob holds a record taken `offset_s` into its hour (the
    /// same sample, written twice).
    pub fn taken_at(blob: &[u8], offset_s: u16) -> bool {
        blob.chunks_exact(SAMPLE_BYTES)
            .any(|r| u16::from_le_bytes([r[0], r[1]]) == offset_s)
    }

    /// Writes `record` (one [`Sample::encode`]d) into the first empty slot
    /// of an hour's blob, where the row keeps its size; a blob without one
    /// (a new row, an hour with more samples than its row was made for, a
    /// row of an older layout) grows by the record and `spare` empty slots
    /// after it, for the samples still to come. Returns whether it grew.
    pub fn place(blob: &mut Vec<u8>, record: &[u8], spare: usize) -> bool {
        if let Some(i) = blob
            .chunks_exact(SAMPLE_BYTES)
            .position(|r| r == EMPTY_SLOT)
        {
            let at = i * SAMPLE_BYTES;
            blob[at..at + SAMPLE_BYTES].copy_from_slice(record);
            return false;
        }
        blob.truncate(blob.len() - blob.len() % SAMPLE_BYTES);
        blob.extend_from_slice(record);
        let room = MAX_SLOTS.saturating_sub(blob.len() / SAMPLE_BYTES);
        for _ in 0..spare.min(room) {
            blob.extend_from_slice(&EMPTY_SLOT);
        }
        true
    }
}

/// A server's sums over the samples of one hour. `peak` and `room_n` are
/// `None` for an hour folded before they were recorded (a record of the
/// older, 10-byte layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HourSums {
    /// Samples in which it was listed.
    pub n: u16,
    /// Its players, summed over those samples.
    pub players: u32,
    pub max: u8,
    /// Samples in which it was open.
    pub open_n: u16,
    /// The most players at one sample.
    pub peak: Option<u16>,
    /// Samples in which it was open with at least one player and a free
    /// slot ([`has_room`]).
    pub room_n: Option<u16>,
}

impl Default for HourSums {
    /// No samples: every count zero, and known.
    fn default() -> Self {
        Self {
            n: 0,
            players: 0,
            max: 0,
            open_n: 0,
            peak: Some(0),
            room_n: Some(0),
        }
    }
}

/// Whether a server's lobby had room for a player to join a game about to
/// start: open, with at least one player and a free slot.
pub fn has_room(players: u32, max: u8, open: bool) -> bool {
    open && players >= 1 && players < u32::from(max)
}

/// The flag on the hour byte of a record of the current layout
/// ([`HOUR_BYTES`]); a record without it has the older layout
/// ([`OLD_HOUR_BYTES`]), without peak and room.
const WITH_PEAK: u8 = 0x80;

impl HourSums {
    /// Adds one sample (saturating).
    pub fn add(&mut self, players: u32, max: u8, open: bool) {
        self.n = self.n.saturating_add(1);
        self.players = self.players.saturating_add(players);
        self.max = self.max.max(max);
        self.open_n = self.open_n.saturating_add(u16::from(open));
        let seen = u16::try_from(players).unwrap_or(u16::MAX);
        self.peak = self.peak.map(|p| p.max(seen));
        self.room_n = self
            .room_n
            .map(|r| r.saturating_add(u16::from(has_room(players, max, open))));
    }

    /// The hours of a day's blob that have sums, in order: `(hour of the
    /// day, sums)`; records of both layouts are read, a truncated last
    /// record is ignored.
    pub fn decode_all(blob: &[u8]) -> impl Iterator<Item = (u8, Self)> + '_ {
        let mut at = 0;
        std::iter::from_fn(move || {
            let first = *blob.get(at)?;
            let len = if first & WITH_PEAK != 0 {
                HOUR_BYTES
            } else {
                OLD_HOUR_BYTES
            };
            let r = blob.get(at..at + len)?;
            at += len;
            let extra = |i: usize| u16::from_le_bytes([r[i], r[i + 1]]);
            let with_peak = first & WITH_PEAK != 0;
            Some((
                first & !WITH_PEAK,
                Self {
                    n: u16::from_le_bytes([r[1], r[2]]),
                    players: u32::from_le_bytes([r[3], r[4], r[5], r[6]]),
                    max: r[7],
                    open_n: u16::from_le_bytes([r[8], r[9]]),
                    peak: with_peak.then(|| extra(10)),
                    room_n: with_peak.then(|| extra(12)),
                },
            ))
        })
    }

    /// The record of these sums as hour `h`: the current layout when peak
    /// and room are known, the older one when not (an hour folded before
    /// they were recorded keeps saying so).
    fn record(&self, h: u8) -> Vec<u8> {
        let mut record = Vec::with_capacity(HOUR_BYTES);
        record.push(h);
        record.extend_from_slice(&self.n.to_le_bytes());
        record.extend_from_slice(&self.players.to_le_bytes());
        record.push(self.max);
        record.extend_from_slice(&self.open_n.to_le_bytes());
        if let (Some(peak), Some(room_n)) = (self.peak, self.room_n) {
            record[0] |= WITH_PEAK;
            record.extend_from_slice(&peak.to_le_bytes());
            record.extend_from_slice(&room_n.to_le_bytes());
        }
        record
    }

    /// Stores these sums as hour `h` (0-23) of a day's blob, replacing
    /// that hour's record or inserting it in order.
    pub fn write(&self, blob: &mut Vec<u8>, h: u8) {
        let mut hours: Vec<(u8, Self)> =
            Self::decode_all(blob).filter(|&(at, _)| at != h).collect();
        let at = hours.partition_point(|&(at, _)| at < h);
        hours.insert(at, (h, *self));
        blob.clear();
        for (at, sums) in hours {
            blob.extend_from_slice(&sums.record(at));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hour `h` of a day's blob; zero when it has none.
    fn read(blob: &[u8], h: u8) -> HourSums {
        HourSums::decode_all(blob)
            .find(|&(at, _)| at == h)
            .map(|(_, sums)| sums)
            .unwrap_or_default()
    }

    fn record(s: Sample) -> Vec<u8> {
        let mut out = Vec::new();
        s.encode(&mut out);
        out
    }

    #[test]
    fn samples_fill_empty_slots_in_place_and_grow_only_when_full() {
        let at = |offset_s| Sample {
            offset_s,
            players: 65_535,
            max: 255,
            open: true,
            mode: 127,
        };
        let mut blob = Vec::new();
        assert!(Sample::place(&mut blob, &record(at(30)), 2), "a new row");
        assert_eq!(blob.len(), 3 * SAMPLE_BYTES, "made for three samples");
        assert!(!Sample::place(&mut blob, &record(at(90)), 2));
        assert!(!Sample::place(&mut blob, &record(at(255)), 2));
        assert_eq!(blob.len(), 3 * SAMPLE_BYTES, "written in place");
        let offsets: Vec<u16> = Sample::decode_all(&blob).map(|s| s.offset_s).collect();
        assert_eq!(offsets, [30, 90, 255]);
        assert!(Sample::place(&mut blob, &record(at(511)), 0), "full: grows");
        assert_eq!(blob.len(), 4 * SAMPLE_BYTES);
        // Every byte of a record at its largest, yet no empty slot is
        // found inside or across records.
        assert!(!blob.windows(SAMPLE_BYTES).any(|w| w == EMPTY_SLOT));
        let mut huge = Vec::new();
        Sample::place(&mut huge, &record(at(0)), usize::MAX);
        assert_eq!(huge.len(), MAX_SLOTS * SAMPLE_BYTES, "never past an hour");
        assert_eq!(Sample::decode_all(&huge).count(), 1);
    }

    #[test]
    fn records_round_trip() {
        let a = Sample {
            offset_s: 3599,
            players: 65_535,
            max: 255,
            open: true,
            mode: 2,
        };
        let b = Sample {
            offset_s: 30,
            players: 0,
            max: 4,
            open: false,
            mode: 1,
        };
        let mut blob = Vec::new();
        a.encode(&mut blob);
        b.encode(&mut blob);
        assert_eq!(blob.len(), 2 * SAMPLE_BYTES);
        assert_eq!(Sample::decode_all(&blob).collect::<Vec<_>>(), [a, b]);
        assert!(Sample::taken_at(&blob, 30) && !Sample::taken_at(&blob, 31));

        let mut day = Vec::new();
        let mut sums = HourSums::default();
        sums.add(u32::MAX, 8, true);
        sums.add(3, 4, false);
        sums.write(&mut day, 23);
        let mut early = HourSums::default();
        early.add(2, 4, true);
        early.write(&mut day, 5);
        early.add(1, 4, true);
        early.write(&mut day, 5);
        assert_eq!(day.len(), 2 * HOUR_BYTES, "one record an hour");
        assert_eq!(read(&day, 23), sums);
        assert_eq!(sums.peak, Some(u16::MAX), "a sample's players, saturated");
        assert_eq!(read(&day, 5).peak, Some(2));
        assert_eq!(read(&day, 5).room_n, Some(2), "open, players, a free slot");
        assert_eq!(read(&day, 5).n, 2);
        assert_eq!(
            HourSums::decode_all(&day)
                .map(|(h, _)| h)
                .collect::<Vec<_>>(),
            [5, 23],
            "in order"
        );
        assert_eq!(sums.players, u32::MAX, "saturates");
        assert_eq!(read(&day, 0), HourSums::default());
        assert_eq!(read(&[], 5), HourSums::default());
    }

    #[test]
    fn records_of_the_older_layout_read_without_peak_and_stay_so() {
        // An hour folded before peaks: hour 3, 2 samples, 5 players, max
        // 8, open once.
        let mut day = vec![3, 2, 0, 5, 0, 0, 0, 8, 1, 0];
        let (h, old) = HourSums::decode_all(&day).next().unwrap();
        assert_eq!(
            (h, old.n, old.players, old.max, old.open_n),
            (3, 2, 5, 8, 1)
        );
        assert_eq!((old.peak, old.room_n), (None, None));
        // A new hour beside it: the old one keeps its layout.
        let mut new = HourSums::default();
        new.add(4, 4, true);
        new.write(&mut day, 7);
        assert_eq!(day.len(), OLD_HOUR_BYTES + HOUR_BYTES);
        assert_eq!(read(&day, 3), old);
        assert_eq!(read(&day, 7).peak, Some(4));
        assert_eq!(read(&day, 7).room_n, Some(0), "full: no room");
        // Adding to an unknown peak keeps it unknown.
        let mut more = old;
        more.add(9, 9, true);
        assert_eq!(more.peak, None);
        assert!(!has_room(0, 4, true) && !has_room(1, 4, false) && has_room(1, 4, true));
    }
}
