//! The recording in a real bridge: 10,000 game servers on its embedded
//! master, a sample every second. What the writer thread (`history-writer`,
//! found by name in `/proc/PID/task`) spends per sample, and whether a
//! push to delta viewers is slower while a sample is being written: each
//! round is classed afterwards by the bridge's own record of its last
//! write (`bridge_history_last_write_timestamp_seconds` and
//! `bridge_history_last_write_seconds`).

use std::{
    net::SocketAddr,
    path::Path,
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use lobby_testkit::{http, metrics, try_until};

use crate::{
    direct,
    error::{Error, Result},
    phases::{
        crowd::{Crowd, Member, Rounds},
        Env,
    },
    procs::{self, BridgeLaunch},
    report::{count, q, times, Row, Verdict},
    ws,
};

const SNAPSHOT_PREFIX: &str = r#"{"command":"bridgeSnapshot""#;
const DELTA_PREFIX: &str = r#"{"command":"bridgeDelta""#;
/// Markers of the measured changes (players far above any real count).
const MARKER_BASE: u64 = 40_000;

fn wall_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// The bridge's last write: (samples written, start and end in Unix ms).
async fn last_write(addr: SocketAddr) -> Result<(f64, f64, f64)> {
    let scrape = metrics::Scrape::of(addr).await.map_err(Error::Unexpected)?;
    let get = |name: &str| scrape.sample(name).map_err(Error::Unexpected);
    let n = get("bridge_history_samples_written_total")?;
    let end = get("bridge_history_last_write_timestamp_seconds")? * 1e3;
    let took = get("bridge_history_last_write_seconds")? * 1e3;
    Ok((n, end - took, end))
}

/// A delta viewer that loaded list `since` of `epoch` first (as the page
/// does) and reports the rounds' markers.
async fn viewer(url: String, subscribe: Arc<str>, member: Member) -> Result<()> {
    let permit = member.connecting().await;
    let mut socket = ws::connect_small(&url).await?;
    ws::send(&mut socket, &subscribe).await?;
    loop {
        let text = ws::next_text(&mut socket).await?;
        if text.starts_with(SNAPSHOT_PREFIX) || text.starts_with(DELTA_PREFIX) {
            break;
        }
    }
    drop(permit);
    member.watch(&mut socket).await
}

/// How one round fell against the bridge's writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// The change was made while a sample was being written.
    During,
    /// No write ran from the change until every viewer had it.
    Clear,
}

/// The recording figures.
pub(super) async fn run(env: &Env, dir: &Path) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let servers = s.history_servers;
    let every = Duration::from_secs(1);
    let opts = BridgeLaunch {
        data_dir: Some(dir.to_owned()),
        history_interval: Some(every),
        // The embedded master's game servers count against it too.
        ..procs::bridge_for(
            &env.bins,
            (servers + s.history_viewers + 100).max(10_000),
            None,
        )
    };
    let (bridge, addr, maddr) = procs::start_bridge_embedded(&env.bins, &opts).await?;
    // Each on its own connection, and no probe beside them: the embedded
    // master's connection cap (10,000 by default) is exactly the servers.
    let mut games = Vec::with_capacity(servers);
    let mut listed = serde_json::Value::Null;
    for i in 0..servers {
        let mut c = direct::connect(maddr).await?;
        let port = 20_000 + (i % 30_000) as u16;
        direct::send(
            &mut c,
            &direct::register_json(&format!("History {i}"), port),
        )
        .await?;
        games.push(c);
        if (i + 1) % 1000 == 0 || i + 1 == servers {
            // 503 until the bridge has its first list.
            listed = try_until(&format!("{} servers listed", i + 1), || async {
                let a = http::get_ok(addr, "/api/servers", "")
                    .await
                    .map_err(Error::Unexpected)?;
                let v: serde_json::Value = serde_json::from_slice(&a.body)?;
                match v["servers"].as_array().map(Vec::len) {
                    Some(n) if n > i => Ok(v),
                    n => Err(Error::Unexpected(format!("{n:?} listed"))),
                }
            })
            .await?;
        }
    }
    let subscribe: Arc<str> = format!(
        r#"{{"command":"bridgeSubscribe","content":{{"deltas":true,"epoch":"{}","since":{}}}}}"#,
        listed["epoch"].as_str().unwrap_or_default(),
        listed["seq"].as_u64().unwrap_or_default()
    )
    .into();
    let url = ws::url(addr);
    let mut viewers = Crowd::open(s.history_viewers, "delta viewers", |member| {
        viewer(url.clone(), subscribe.clone(), member)
    })
    .await?;

    // The writer's CPU per sample over a window of samples.
    let window = if s.smoke {
        Duration::from_secs(3)
    } else {
        Duration::from_secs(20)
    };
    // Let the first samples (new tables) pass.
    tokio::time::sleep(2 * every).await;
    let (n0, _, _) = last_write(addr).await?;
    let cpu0 = procs::thread_cpu_time(bridge.pid(), "history-writer")?;
    let proc0 = procs::cpu_time(bridge.pid())?;
    let wall0 = metrics::scrape(addr, "bridge_history_write_seconds_sum")
        .await
        .map_err(Error::Unexpected)?;
    tokio::time::sleep(window).await;
    let (n1, _, _) = last_write(addr).await?;
    let cpu1 = procs::thread_cpu_time(bridge.pid(), "history-writer")?;
    let proc1 = procs::cpu_time(bridge.pid())?;
    let wall1 = metrics::scrape(addr, "bridge_history_write_seconds_sum")
        .await
        .map_err(Error::Unexpected)?;
    let dropped = metrics::scrape(addr, "bridge_history_samples_dropped_total")
        .await
        .map_err(Error::Unexpected)?;
    let samples = (n1 - n0).max(1.0);
    let cpu_per = cpu1.saturating_sub(cpu0).as_secs_f64() * 1e3 / samples;
    let proc_per = proc1.saturating_sub(proc0).as_secs_f64() * 1e3 / samples;
    let wall_per = (wall1 - wall0) * 1e3 / samples;

    // Push rounds, aimed into a write or between two, classed afterwards.
    let (mut during, mut clear) = (Rounds::new(), Rounds::new());
    let (mut n_during, mut n_clear, mut discarded) = (0, 0, 0);
    let mut id = 0u64;
    let mut want = Class::During;
    while (n_during < s.history_rounds || n_clear < s.history_rounds)
        && id < 8 * s.history_rounds as u64 + 8
    {
        id += 1;
        let (n_before, start, end) = last_write(addr).await?;
        let took = end - start;
        let period = every.as_secs_f64() * 1e3;
        let mut next = start + period;
        while next < wall_ms() + 30.0 {
            next += period;
        }
        let aim = match want {
            Class::During => next + took * 0.2,
            Class::Clear => next - (period - took) / 2.0,
        };
        let wait = (aim - wall_ms()).max(0.0);
        tokio::time::sleep(Duration::from_secs_f64(wait / 1e3)).await;
        let current = MARKER_BASE + id;
        let changed = wall_ms();
        let got = viewers
            .round(
                id,
                current,
                direct::send(&mut games[0], &direct::stats_json(current)),
            )
            .await?;
        let done = changed + got.iter().max().map_or(0.0, |d| d.as_secs_f64() * 1e3);
        // Let a write that began meanwhile finish before reading its record.
        tokio::time::sleep(Duration::from_secs_f64((took + 100.0) / 1e3)).await;
        let (n_after, w_start, w_end) = last_write(addr).await?;
        let class = if n_after == n_before && changed > end {
            Some(Class::Clear)
        } else if n_after == n_before + 1.0 && w_start <= changed && changed <= w_end {
            Some(Class::During)
        } else if n_after == n_before + 1.0 && w_start > done {
            Some(Class::Clear)
        } else {
            None
        };
        match class {
            Some(Class::During) => {
                during.add(&got);
                n_during += 1;
            }
            Some(Class::Clear) => {
                clear.add(&got);
                n_clear += 1;
            }
            None => discarded += 1,
        }
        want = if n_during >= s.history_rounds || (n_clear < s.history_rounds && n_during > n_clear)
        {
            Class::Clear
        } else {
            Class::During
        };
    }
    viewers.close().await;
    bridge.stop().await;
    drop(games);

    let v = s.history_viewers;
    let mut rows = vec![Row::new(
        format!(
            "history: the bridge's writer thread per sample, {} servers listed, a sample every 1 s (fresh database; {samples:.0} samples, {dropped:.0} skipped)",
            count(servers as u64)
        ),
        format!("CPU {cpu_per:.1} ms"),
        format!("write time (bridge_history_write_seconds) {wall_per:.1} ms; whole bridge CPU {proc_per:.1} ms per sample"),
        times(cpu_per, wall_per),
        "CPU ≤ 50 ms",
        Verdict::of(cpu_per <= 50.0),
    )];
    if n_during == 0 || n_clear == 0 {
        rows.push(Row::skipped(
            "history: push while a sample is written",
            format!("rounds not classed: {n_during} during a write, {n_clear} clear, {discarded} straddling"),
        ));
    } else {
        let p99 = during.each.value_at_quantile(0.99);
        let base = clear.each.value_at_quantile(0.99);
        rows.push(Row::new(
            format!(
                "history: game server change → {} delta viewers while a sample of {} servers is written ({n_during} rounds; {discarded} straddling discarded)",
                count(v as u64),
                count(servers as u64)
            ),
            during.summary(v),
            format!(
                "no write running ({n_clear} rounds): p50 {} / p99 {}",
                q(&clear.each, 0.5),
                q(&clear.each, 0.99)
            ),
            times(p99 as f64, base as f64),
            "p99 ≤ 2× the rounds without",
            Verdict::of(p99 as f64 <= 2.0 * base.max(1) as f64 || p99 <= 20_000),
        ));
    }
    Ok(rows)
}
