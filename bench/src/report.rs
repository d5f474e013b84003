//! The one table the benchmark prints: each figure, the baseline measured
//! in the same run, their ratio, the target and whether it is met.

use hdrhistogram::Histogram;

/// Whether a figure meets its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Met,
    Missed,
    /// Reported for context; no target of its own.
    Info,
    /// Not measured in this run (the reason is in the value column).
    Skipped,
}

impl Verdict {
    /// `Met` when `ok`, else `Missed`.
    pub fn of(ok: bool) -> Self {
        if ok {
            Self::Met
        } else {
            Self::Missed
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Met => "met",
            Self::Missed => "MISSED",
            Self::Info => "-",
            Self::Skipped => "skipped",
        }
    }
}

/// One line of the table.
#[derive(Debug, Clone)]
pub struct Row {
    pub figure: String,
    pub value: String,
    pub baseline: String,
    pub ratio: String,
    pub target: String,
    pub verdict: Verdict,
}

impl Row {
    /// A row; `ratio` and `target` may be "-".
    pub fn new(
        figure: impl Into<String>,
        value: impl Into<String>,
        baseline: impl Into<String>,
        ratio: impl Into<String>,
        target: impl Into<String>,
        verdict: Verdict,
    ) -> Self {
        Self {
            figure: figure.into(),
            value: value.into(),
            baseline: baseline.into(),
            ratio: ratio.into(),
            target: target.into(),
            verdict,
        }
    }

    /// A row for a phase that did not run, with the reason.
    pub fn skipped(figure: impl Into<String>, why: impl Into<String>) -> Self {
        Self::new(figure, why, "-", "-", "-", Verdict::Skipped)
    }
}

/// Rows plus notes printed under the table.
#[derive(Debug, Default)]
pub struct Table {
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

impl Table {
    /// The table as Markdown.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "| figure | measured | baseline (same run) | ratio | target | verdict |\n|---|---|---|---|---|---|\n",
        );
        for r in &self.rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                r.figure,
                r.value,
                r.baseline,
                r.ratio,
                r.target,
                r.verdict.label()
            ));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                out.push_str(&format!("- {n}\n"));
            }
        }
        out
    }
}

/// A latency histogram in microseconds (1 µs to 10 min, 3 digits).
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid histogram bounds")
}

/// Records a duration in microseconds (clamped to the histogram's range).
pub fn record(h: &mut Histogram<u64>, d: std::time::Duration) {
    h.saturating_record((d.as_micros() as u64).max(1));
}

/// Microseconds as milliseconds, three decimals below 10 ms.
pub fn ms(us: u64) -> String {
    let v = us as f64 / 1000.0;
    if v < 10.0 {
        format!("{v:.3} ms")
    } else {
        format!("{v:.1} ms")
    }
}

/// A quantile of a histogram in milliseconds.
pub fn q(h: &Histogram<u64>, quantile: f64) -> String {
    ms(h.value_at_quantile(quantile))
}

/// The middle value of `v` (the upper one of an even count; NaN when
/// empty): one disturbed measurement of a few does not move it.
pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// `a / b` as `2.31×`.
pub fn times(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}×", a / b)
    } else {
        "-".into()
    }
}

/// Thousands separated with commas, for counts.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How the table names a directory: relative to the repository (where
/// `scripts/bench.sh` runs), or under `$CARGO_TARGET_DIR` when the build
/// lives there, so a copied table holds no machine's absolute paths. Any
/// other directory is named by its last two components.
pub fn shown_path(
    dir: &std::path::Path,
    repo: &std::path::Path,
    target_dir: Option<&std::path::Path>,
) -> String {
    if let Ok(rel) = dir.strip_prefix(repo) {
        return rel.display().to_string();
    }
    if let Some(rel) = target_dir.and_then(|t| dir.strip_prefix(t).ok()) {
        return format!("$CARGO_TARGET_DIR/{}", rel.display());
    }
    let tail: Vec<_> = dir.components().rev().take(2).collect();
    let tail: std::path::PathBuf = tail.into_iter().rev().collect();
    format!("…/{}", tail.display())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::shown_path;

    #[test]
    fn paths_in_the_table_name_no_machine() {
        let repo = Path::new("/home/someone/lobby");
        assert_eq!(
            shown_path(Path::new("/home/someone/lobby/target/release"), repo, None),
            "target/release"
        );
        let shared = Path::new("/srv/cargo-target");
        assert_eq!(
            shown_path(Path::new("/srv/cargo-target/release"), repo, Some(shared)),
            "$CARGO_TARGET_DIR/release"
        );
        assert_eq!(
            shown_path(Path::new("/opt/build/x/release"), repo, None),
            "…/x/release"
        );
    }
}
