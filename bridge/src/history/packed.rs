//! The byte formats of the packed history rows (described in
//! `migrations/002_packed_history.sql`): a server's samples of one hour,
//! and its sums for each hour of one day. Packing them keeps one row per
//! server per hour or day instead of one per sample, which is what makes
//! the history small on disk and cheap to write.

/// Bytes of one sample's record in `server_hours.samples`.
pub const SAMPLE_BYTES: usize = 6;
/// Bytes of one hour's sums in `server_days.hours`.
pub const HOUR_BYTES: usize = 10;

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

    /// The records of an hour's blob, in the order they were taken; a
    /// truncated last record is ignored.
    pub fn decode_all(blob: &[u8]) -> impl Iterator<Item = Sample> + '_ {
        blob.chunks_exact(SAMPLE_BYTES).map(|r| Sample {
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
}

/// A server's sums over the samples of one hour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HourSums {
    /// Samples in which it was listed.
    pub n: u16,
    /// Its players, summed over those samples.
    pub players: u32,
    pub max: u8,
    /// Samples in which it was open.
    pub open_n: u16,
}

impl HourSums {
    /// Adds one sample (saturating).
    pub fn add(&mut self, players: u32, max: u8, open: bool) {
        self.n = self.n.saturating_add(1);
        self.players = self.players.saturating_add(players);
        self.max = self.max.max(max);
        self.open_n = self.open_n.saturating_add(u16::from(open));
    }

    /// The hours of a day's blob that have sums, in order: `(hour of the
    /// day, sums)`; a truncated last record is ignored.
    pub fn decode_all(blob: &[u8]) -> impl Iterator<Item = (u8, Self)> + '_ {
        blob.chunks_exact(HOUR_BYTES).map(|r| {
            (
                r[0],
                Self {
                    n: u16::from_le_bytes([r[1], r[2]]),
                    players: u32::from_le_bytes([r[3], r[4], r[5], r[6]]),
                    max: r[7],
                    open_n: u16::from_le_bytes([r[8], r[9]]),
                },
            )
        })
    }

    /// Stores these sums as hour `h` (0-23) of a day's blob, replacing
    /// that hour's record or inserting it in order.
    pub fn write(&self, blob: &mut Vec<u8>, h: u8) {
        let mut record = [0u8; HOUR_BYTES];
        record[0] = h;
        record[1..3].copy_from_slice(&self.n.to_le_bytes());
        record[3..7].copy_from_slice(&self.players.to_le_bytes());
        record[7] = self.max;
        record[8..10].copy_from_slice(&self.open_n.to_le_bytes());
        blob.truncate(blob.len() - blob.len() % HOUR_BYTES);
        let at = blob
            .chunks_exact(HOUR_BYTES)
            .position(|r| r[0] >= h)
            .unwrap_or(blob.len() / HOUR_BYTES);
        let range = at * HOUR_BYTES..(at + 1) * HOUR_BYTES;
        if blob.get(range.start) == Some(&h) {
            blob[range].copy_from_slice(&record);
        } else {
            blob.splice(range.start..range.start, record);
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
}
