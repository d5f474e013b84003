//! The recording handed over (`docs/protocol.md` §2.2): bridges sharing
//! one PostgreSQL database (`--database-url`) elect one recorder, the
//! bridge holding a session-level advisory lock, which PostgreSQL releases
//! when that bridge's session dies. The phase kills the recorder with
//! SIGKILL, as a crash would, and times how long until another bridge
//! records: it says `bridge_history_recording 1` and its
//! `bridge_history_samples_written_total` grew. Target: within two
//! intervals plus 5 s. Afterwards the shared database must hold exactly
//! one lobby sample for every interval from the first to the last, across
//! all the kills.
//!
//! A scratch cluster (`lobby_testkit::postgres::Cluster`, as the history
//! phase's) and a master with its change feed, the bridges following it
//! (`--master`, `--master-feed`), as docs/deploying.md deploys them.

use std::{net::SocketAddr, time::Duration};

use hdrhistogram::Histogram;
use lobby_testkit::{
    metrics,
    postgres::{self, Cluster},
    try_until,
};
use tokio::time::Instant;

use crate::{
    direct,
    error::{within_for, Error, Result},
    phases::Env,
    procs::{self, BridgeLaunch, MasterFeed, Proc},
    report::{count, histogram, ms, record, times, Row, Verdict},
};

/// The database the bridges share.
const DB: &str = "lobby_handover";
/// How often the survivors' `/metrics` are read after a kill.
const POLL: Duration = Duration::from_millis(50);
/// A round without a handover by then is reported as missed (far above
/// any interval the phase uses, and its target): part of the figure, a
/// miss is a row's verdict, not a failed run; the kit's hang bound.
const GIVE_UP: Duration = lobby_testkit::HUNG;

const FIGURE: &str = "history handover: SIGKILL of the recording bridge → another bridge records";

/// What a bridge's `/metrics` says of the recording.
#[derive(Debug, Clone, Copy)]
struct Recording {
    /// `bridge_history_recording` is 1.
    on: bool,
    /// `bridge_history_samples_written_total`.
    written: f64,
}

async fn recording(addr: SocketAddr) -> Result<Recording> {
    let scrape = metrics::Scrape::of(addr).await.map_err(Error::Unexpected)?;
    let get = |name: &str| scrape.sample(name).map_err(Error::Unexpected);
    Ok(Recording {
        on: get("bridge_history_recording")? == 1.0,
        written: get("bridge_history_samples_written_total")?,
    })
}

/// A bridge of the phase.
struct Bridge {
    proc_: Proc,
    addr: SocketAddr,
}

async fn start_bridge(env: &Env, master: SocketAddr, opts: &BridgeLaunch) -> Result<Bridge> {
    let (proc_, addr) = procs::start_bridge(&env.bins, master, opts).await?;
    Ok(Bridge { proc_, addr })
}

/// The one bridge recording, once it has written a sample: its index.
async fn recorder(bridges: &[Bridge]) -> Result<usize> {
    let what = "one bridge recording the history, a sample written";
    Ok(try_until(what, || async {
        let mut on = Vec::new();
        for (i, b) in bridges.iter().enumerate() {
            let r = recording(b.addr).await?;
            if r.on {
                on.push((i, r.written));
            }
        }
        match on[..] {
            [(i, written)] if written >= 1.0 => Ok(i),
            _ => Err(Error::Unexpected(format!(
                "recording (bridge, samples written): {on:?}"
            ))),
        }
    })
    .await?)
}

/// Waits until bridge `addr` has written `more` samples beyond `written`.
async fn samples_after(addr: SocketAddr, written: f64, more: f64) -> Result<()> {
    Ok(try_until("the recorder's next samples", || async move {
        let now = recording(addr).await?.written;
        if now >= written + more {
            Ok(())
        } else {
            Err(Error::Unexpected(format!("{now} samples written")))
        }
    })
    .await?)
}

/// The recorder, once it has written `more` samples beyond those it had:
/// its index.
async fn recorder_after(bridges: &[Bridge], more: f64) -> Result<usize> {
    let r = recorder(bridges).await?;
    let written = recording(bridges[r].addr).await?.written;
    samples_after(bridges[r].addr, written, more).await?;
    Ok(r)
}

/// After the kill: the first survivor (index into `bridges`, baseline of
/// its samples written in `before`) that records and has written a sample;
/// `None` if none did within [`GIVE_UP`].
async fn taken_over(bridges: &[Bridge], before: &[f64]) -> Result<Option<usize>> {
    let found = within_for(GIVE_UP, "a survivor recording", async {
        loop {
            for (i, b) in bridges.iter().enumerate() {
                let r = recording(b.addr).await?;
                if r.on && r.written > before[i] {
                    return Ok(i);
                }
            }
            tokio::time::sleep(POLL).await;
        }
    })
    .await;
    match found {
        Ok(i) => Ok(Some(i)),
        Err(Error::Timeout(..)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Runs the phase; one skipped row when PostgreSQL is missing.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    if let Err(why) = postgres::find_bin() {
        return Ok(vec![Row::skipped(FIGURE, why.to_string())]);
    }
    let s = &env.sizes;
    let every = s.handover_interval;
    let target = 2 * every + Duration::from_secs(5);
    let load = procs::load_average().unwrap_or_else(|| "?".into());
    let (cluster, url) = tokio::task::spawn_blocking(|| {
        let cluster = Cluster::start()?;
        let url = cluster.create_database(DB)?;
        Ok::<_, lobby_testkit::Error>((cluster, url))
    })
    .await
    .map_err(|e| Error::Unexpected(e.to_string()))??;

    let (master, maddr, feed) =
        procs::start_master_with_feed(&env.bins, s.handover_servers + 100).await?;
    let servers = direct::register_servers(maddr, s.handover_servers, "Handover", 0).await?;
    let opts = BridgeLaunch {
        master_feed: MasterFeed::At(feed),
        database_url: Some(url),
        history_interval: Some(every),
        ..procs::bridge(&env.bins)
    };
    let n_bridges = s.handover_bridges.max(2);
    let mut bridges = Vec::with_capacity(n_bridges);
    for _ in 0..n_bridges {
        bridges.push(start_bridge(env, maddr, &opts).await?);
    }
    let mut took = histogram();
    let mut rounds = Vec::with_capacity(s.handover_rounds);
    let mut lost_round = None;
    for round in 0..s.handover_rounds {
        // Just after one of its samples, then later into the interval
        // each round: the first round is the slowest case (the others
        // have just asked and must wait a whole interval to ask again).
        let r = recorder_after(&bridges, 1.0).await?;
        let into = every.mul_f64(round as f64 / s.handover_rounds as f64);
        tokio::time::sleep(into).await;
        let killed = bridges.swap_remove(r);
        let mut before = Vec::with_capacity(bridges.len());
        for b in &bridges {
            before.push(recording(b.addr).await?.written);
        }
        let t0 = Instant::now();
        killed.proc_.kill().await?;
        if taken_over(&bridges, &before).await?.is_none() {
            lost_round = Some(round + 1);
            break;
        }
        let d = t0.elapsed();
        record(&mut took, d);
        rounds.push(format!("{:.2} s", d.as_secs_f64()));
        eprintln!(
            "[loadgen] handover: round {} (killed {:.2} intervals after its sample): {d:.2?}",
            round + 1,
            into.as_secs_f64() / every.as_secs_f64()
        );
        // A fresh bridge in place of the killed one.
        bridges.push(start_bridge(env, maddr, &opts).await?);
    }
    // Two more samples by the last recorder: every interval before them
    // is then settled in the database.
    if lost_round.is_none() {
        recorder_after(&bridges, 2.0).await?;
    }
    for b in bridges {
        b.proc_.stop().await;
    }
    drop(servers);
    master.stop().await;
    let times = tokio::task::spawn_blocking(move || {
        let times = cluster.sample_times(DB);
        drop(cluster);
        times
    })
    .await
    .map_err(|e| Error::Unexpected(e.to_string()))??;
    let gaps = postgres::interval_gaps(&times, every.as_millis() as i64);

    let rounds_n = s.handover_rounds.max(1);
    let kills = if rounds_n == 1 {
        "1 kill, just after the recorder's sample".to_owned()
    } else {
        format!(
            "{rounds_n} kills, 0 to {:.1} intervals after the recorder's sample, a step later each",
            (rounds_n - 1) as f64 / rounds_n as f64
        )
    };
    let label = format!(
        "{FIGURE} and has written a sample ({n_bridges} bridges on one PostgreSQL database, \
         --history-interval {}s, {} servers; {kills}; load average {load})",
        every.as_secs(),
        count(s.handover_servers as u64),
    );
    Ok(vec![
        handover_row(label, &took, &rounds, lost_round, every, target),
        intervals_row(&times, &gaps, every),
    ])
}

fn handover_row(
    label: String,
    took: &Histogram<u64>,
    rounds: &[String],
    lost_round: Option<usize>,
    every: Duration,
    target: Duration,
) -> Row {
    let max = Duration::from_micros(took.max());
    let value = match lost_round {
        Some(n) => format!(
            "round {n}: no bridge recorded within {} s of the kill (before it: {})",
            GIVE_UP.as_secs(),
            rounds.join(", ")
        ),
        None if took.is_empty() => "no round ran".to_owned(),
        None => format!(
            "p50 {} max {} (rounds: {})",
            ms(took.value_at_quantile(0.5)),
            ms(took.max()),
            rounds.join(", ")
        ),
    };
    Row::new(
        label,
        value,
        format!(
            "one interval ({} s): how often the others ask",
            every.as_secs()
        ),
        times(max.as_secs_f64(), every.as_secs_f64()),
        format!("max ≤ 2 intervals + 5 s ({:.0} s)", target.as_secs_f64()),
        Verdict::of(lost_round.is_none() && !took.is_empty() && max <= target),
    )
}

fn intervals_row(times: &[i64], gaps: &[(i64, i64)], every: Duration) -> Row {
    let every_ms = every.as_millis() as i64;
    let span = match (times.first(), times.last()) {
        (Some(first), Some(last)) => (last - first) / every_ms + 1,
        _ => 0,
    };
    let value = if gaps.is_empty() {
        format!("{} samples, every interval once", count(times.len() as u64))
    } else {
        let shown: Vec<String> = gaps
            .iter()
            .take(5)
            .map(|(a, b)| format!("{a} → {b} ({} ms)", b - a))
            .collect();
        format!(
            "{} samples, {} gaps: {}",
            count(times.len() as u64),
            gaps.len(),
            shown.join(", ")
        )
    };
    Row::new(
        "history handover: lobby samples in the shared database from the first to the last, across the kills",
        value,
        format!("{span} intervals from the first to the last"),
        "-",
        "every interval exactly once",
        Verdict::of(times.len() >= 2 && gaps.is_empty()),
    )
}
