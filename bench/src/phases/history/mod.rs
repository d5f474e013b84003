//! The player history (`docs/protocol.md` §2.2): what a month of 10,000
//! servers takes on disk, what each sample costs the bridge and whether
//! its writing slows the push, how fast the history API and the badges
//! answer from that month.
//!
//! The month is synthetic ([`synth`]): written through the bridge's own
//! store with a clock of its own. The API and badge figures ask a real
//! bridge started on that data directory; the recording figures a real
//! bridge listing 10,000 game servers. The same synthetic history is then
//! written into PostgreSQL ([`engines`]) and compared with SQLite's.

mod api;
mod engines;
mod raw;
mod recording;
mod synth;

use crate::{
    error::Result,
    phases::Env,
    report::{count, ms, times, Row, Verdict},
};

const MB: f64 = 1_000_000.0;

/// Runs the history figures.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = env.sizes.clone();
    let work = env.bins.work.join("history");
    let data = work.join("data");
    std::fs::create_dir_all(&data)?;
    let plan = synth::Plan {
        servers: s.history_servers,
        days: s.history_days,
        dense_hours: s.history_dense_hours.min(s.history_days * 24),
        hourly_days: s.history_hourly_days.min(s.history_days),
        interval_ms: 60_000,
    };
    eprintln!(
        "[loadgen] history: writing {} days of {} servers through the bridge's store",
        plan.days,
        count(plan.servers as u64)
    );
    let dir = data.clone();
    let generated =
        tokio::task::spawn_blocking(move || synth::generate(synth::Target::Sqlite(&dir), plan))
            .await
            .map_err(|e| crate::Error::Unexpected(e.to_string()))??;
    let raw_dir = work.join("raw");
    let (servers, hours) = (s.history_servers, s.history_raw_hours);
    let raw = tokio::task::spawn_blocking(move || raw::write(&raw_dir, servers, hours, 60_000))
        .await
        .map_err(|e| crate::Error::Unexpected(e.to_string()))??;
    let _ = std::fs::remove_dir_all(work.join("raw"));

    let mut rows = storage_rows(&plan, &generated, &raw);
    let (dir, requests) = (data.clone(), s.history_requests);
    let (rows_pg, generated) = tokio::task::spawn_blocking(move || {
        engines::compare(plan, &dir, &generated, requests).map(|rows| (rows, generated))
    })
    .await
    .map_err(|e| crate::Error::Unexpected(e.to_string()))??;
    rows.extend(rows_pg);
    rows.extend(api::run(env, &data, generated.end_ms).await?);
    rows.extend(recording::run(env, &work.join("live")).await?);
    let _ = std::fs::remove_dir_all(&work);
    Ok(rows)
}

/// The six largest of `tables` (name, bytes) in MB, for a report row.
fn largest_tables(tables: &[(String, u64)]) -> String {
    let parts: Vec<String> = tables
        .iter()
        .take(6)
        .map(|(name, bytes)| format!("{name} {:.1} MB", *bytes as f64 / MB))
        .collect();
    parts.join(", ")
}

fn storage_rows(plan: &synth::Plan, g: &synth::Generated, raw: &raw::Raw) -> Vec<Row> {
    let days = plan.days as f64;
    let per_day = g.bytes as f64 / plan.servers as f64 / days;
    let scale = days * 24.0 / raw.hours as f64;
    let raw_month = raw.bytes as f64 * scale;
    let target = 400.0 * MB;
    let how = if plan.dense_hours >= plan.days * 24 {
        "every sample written".to_owned()
    } else if plan.hourly_days >= plan.days {
        format!(
            "the last {} h at 60 s, one sample per hour before",
            plan.dense_hours
        )
    } else {
        format!(
            "the last {} h at 60 s, one sample per hour for {} days before, one per day before that",
            plan.dense_hours, plan.hourly_days
        )
    };
    // The target is a month's; a longer plan is reported beside it only.
    let (target_text, verdict) = if plan.days <= 30 {
        ("≤ 400 MB", Verdict::of((g.bytes as f64) <= target))
    } else {
        ("- (≤ 400 MB is a month's)", Verdict::Info)
    };
    vec![
        Row::new(
            format!(
                "history on disk: {} servers, {} days at 60 s, retention passes included ({how}; {} samples, {} server rows, {:.0} s)",
                count(plan.servers as u64),
                plan.days,
                count(g.samples),
                count(g.rows),
                g.took.as_secs_f64()
            ),
            format!(
                "{:.1} MB ({:.0} bytes per server per day; log before checkpoint {:.1} MB)",
                g.bytes as f64 / MB,
                per_day,
                g.wal_before as f64 / MB
            ),
            format!(
                "raw samples kept ({} h written: {:.1} MB, {} rows in {:.0} s; × {scale:.0} for {} days): {:.0} MB",
                raw.hours,
                raw.bytes as f64 / MB,
                count(raw.rows),
                raw.secs,
                plan.days,
                raw_month / MB
            ),
            times(g.bytes as f64, raw_month),
            target_text,
            verdict,
        ),
        Row::new(
            format!(
                "history: one sample of {} servers {} ({} writes)",
                count(plan.servers as u64),
                if g.steady {
                    "at the steady state (48 h of samples kept, pruning in step)"
                } else {
                    "before the steady state (fewer than 48 h of samples)"
                },
                g.cpu.len()
            ),
            format!(
                "CPU p50 {} p99 {} (mean {})",
                ms(g.cpu.value_at_quantile(0.5)),
                ms(g.cpu.value_at_quantile(0.99)),
                ms(g.cpu.mean() as u64)
            ),
            format!(
                "wall p50 {} p99 {}",
                ms(g.wall.value_at_quantile(0.5)),
                ms(g.wall.value_at_quantile(0.99))
            ),
            times(
                g.cpu.value_at_quantile(0.5) as f64,
                g.wall.value_at_quantile(0.5) as f64,
            ),
            "CPU ≤ 50 ms",
            Verdict::of(!g.cpu.is_empty() && g.cpu.value_at_quantile(0.5) <= 50_000),
        ),
        Row::new(
            "history on disk by table and index (SQLite's dbstat, largest first)",
            largest_tables(&g.tables),
            "-",
            "-",
            "-",
            Verdict::Info,
        ),
    ]
}
