//! What `/metrics` shows of the history's recording: samples written and
//! how long each took, failed writes, samples skipped because the writer
//! was behind, and the database's size on disk.

use std::{
    sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed},
    time::Duration,
};

use crate::metrics::{family, Kind};

/// One metric family: name, type, help, and its samples (name suffix, value).
type Family<'a> = (&'a str, Kind, &'a str, Vec<(&'a str, String)>);

/// The recording's counters (plain relaxed atomics, like
/// [`crate::metrics::Metrics`]).
#[derive(Debug, Default)]
pub struct RecordingCounters {
    /// Samples written (with their pruning).
    pub samples: AtomicU64,
    /// Microseconds spent writing those samples, pruning included.
    pub write_micros: AtomicU64,
    /// Microseconds the last written sample took.
    pub last_write_micros: AtomicU64,
    /// Microseconds spent after the samples were written reclaiming what
    /// they left behind (PostgreSQL's vacuum; none on SQLite).
    pub tidy_micros: AtomicU64,
    /// When the last sample was written (Unix ms; 0: none yet).
    pub last_written_ms: AtomicI64,
    /// Writes that failed (a full disk, the size cap, a damaged file).
    pub errors: AtomicU64,
    /// Samples skipped because the writer was still busy with older ones.
    pub dropped: AtomicU64,
    /// Servers left out of samples by the growth bound per source
    /// (`history::admission`), one per server and sample.
    pub refused: AtomicU64,
    /// The database file plus its write-ahead log, in bytes, after the
    /// last write.
    pub database_bytes: AtomicU64,
    /// Whether this bridge is the one recording (always, alone on its
    /// store; the elected one among bridges on a database).
    pub recording: AtomicBool,
}

impl RecordingCounters {
    /// Counts one sample written in `took`, finished at `now` (Unix ms).
    pub fn written(&self, took: Duration, now: i64) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.samples.fetch_add(1, Relaxed);
        self.write_micros.fetch_add(micros, Relaxed);
        self.last_write_micros.store(micros, Relaxed);
        self.last_written_ms.store(now, Relaxed);
    }

    /// Counts the tidying after a sample, which took `took`.
    pub fn tidied(&self, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.tidy_micros.fetch_add(micros, Relaxed);
    }

    /// Appends the Prometheus text of these counters to `out`.
    pub fn render(&self, out: &mut String) {
        let seconds = |micros: u64| (micros as f64 / 1e6).to_string();
        let samples = self.samples.load(Relaxed).to_string();
        let families: [Family; 9] = [
            (
                "bridge_history_samples_written_total",
                Kind::Counter,
                "Samples of the list this bridge wrote to the history database (over the bridges on one database, one per interval).",
                vec![("", samples.clone())],
            ),
            (
                "bridge_history_write_seconds",
                Kind::Summary,
                "Time spent writing each sample, pruning included (sum and count; the mean is sum / count).",
                vec![
                    ("_sum", seconds(self.write_micros.load(Relaxed))),
                    ("_count", samples),
                ],
            ),
            (
                "bridge_history_tidy_seconds_total",
                Kind::Counter,
                "Time spent after the samples were written reclaiming the room they left behind (PostgreSQL's vacuum, on a connection of its own; 0 on SQLite, which has nothing to reclaim).",
                vec![("", seconds(self.tidy_micros.load(Relaxed)))],
            ),
            (
                "bridge_history_last_write_seconds",
                Kind::Gauge,
                "Seconds the last written sample took.",
                vec![("", seconds(self.last_write_micros.load(Relaxed)))],
            ),
            (
                "bridge_history_last_write_timestamp_seconds",
                Kind::Gauge,
                "When the last sample was written (Unix time; 0 before the first).",
                vec![(
                    "",
                    (self.last_written_ms.load(Relaxed) as f64 / 1e3).to_string(),
                )],
            ),
            (
                "bridge_history_write_errors_total",
                Kind::Counter,
                "History writes that failed (full disk, --history-max-bytes, damaged file); recording pauses until one succeeds.",
                vec![("", self.errors.load(Relaxed).to_string())],
            ),
            (
                "bridge_history_recording",
                Kind::Gauge,
                "1 while this bridge is the one recording the history, 0 while another bridge on its database does.",
                vec![("", u8::from(self.recording.load(Relaxed)).to_string())],
            ),
            (
                "bridge_history_samples_dropped_total",
                Kind::Counter,
                "Samples skipped because the history writer was still busy.",
                vec![("", self.dropped.load(Relaxed).to_string())],
            ),
            (
                "bridge_history_servers_refused_total",
                Kind::Counter,
                "Servers left out of a sample because their source had as many keys recorded that day as --history-keys-per-source allows.",
                vec![("", self.refused.load(Relaxed).to_string())],
            ),
        ];
        for (name, kind, help, lines) in families {
            family(out, name, kind, help, lines);
        }
        family(
            out,
            "bridge_history_database_bytes",
            Kind::Gauge,
            "Size of the history database file plus its write-ahead log.",
            [("", self.database_bytes.load(Relaxed))],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_family() {
        let c = RecordingCounters::default();
        c.written(Duration::from_millis(1500), 1_700_000_000_250);
        c.written(Duration::from_millis(500), 1_700_000_001_000);
        c.tidied(Duration::from_millis(250));
        c.errors.fetch_add(3, Relaxed);
        c.database_bytes.store(4096, Relaxed);
        let mut text = String::new();
        c.render(&mut text);
        assert!(
            text.contains("bridge_history_samples_written_total 2\n"),
            "{text}"
        );
        assert!(
            text.contains("bridge_history_write_seconds_sum 2\n"),
            "{text}"
        );
        assert!(text.contains("# TYPE bridge_history_write_seconds summary\n"));
        assert!(text.contains("bridge_history_write_seconds_count 2\n"));
        assert!(
            text.contains("bridge_history_last_write_seconds 0.5\n"),
            "{text}"
        );
        assert!(text.contains("bridge_history_last_write_timestamp_seconds 1700000001\n"));
        assert!(
            text.contains("bridge_history_tidy_seconds_total 0.25\n"),
            "{text}"
        );
        assert!(text.contains("bridge_history_write_errors_total 3\n"));
        assert!(text.contains("bridge_history_samples_dropped_total 0\n"));
        assert!(text.contains("bridge_history_recording 0\n"), "{text}");
        assert!(text.contains("bridge_history_servers_refused_total 0\n"));
        assert!(text.contains(
            "# TYPE bridge_history_database_bytes gauge\nbridge_history_database_bytes 4096\n"
        ));
    }
}
