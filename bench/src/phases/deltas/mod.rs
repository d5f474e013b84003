//! Deltas (`docs/protocol.md` §3) with the master inside the bridge: what one
//! viewer receives per second while one of 10,000 servers changes every
//! 200 ms, how long a game server's change takes to reach thousands of
//! delta viewers, what the bridge's CPU pays for them, and how many bytes
//! the first load (`/api/servers`, compressed) moves. Then the same change
//! with a remote master: polled, and followed through its change feed.

pub(crate) mod churn;
pub(crate) mod list;
pub(crate) mod viewers;

use std::{sync::atomic::Ordering::Relaxed, time::Duration};

use hdrhistogram::Histogram;

use lobby_testkit::{http, metrics, try_until};

use crate::{
    direct::{self, Conn},
    error::{Error, Result},
    phases::{crowd::Rounds, Env},
    procs::{self, BridgeLaunch, MasterFeed},
    report::{count, ms, q, times, Row, Verdict},
};
use churn::{churn_cpu, share};
use list::{api_list, listed, register};
use viewers::{subscribe_json, Mode, Viewers};

/// Markers of the measured changes: far above the churn's player counts.
const MARKER_BASE: u64 = 20_000;

/// Latency rounds: `servers[0]` changes its stats over TCP.
async fn rounds(
    viewers: &mut Viewers,
    servers: &mut [Conn],
    first_id: u64,
    n: usize,
) -> Result<Rounds> {
    let mut measured = Rounds::new();
    for i in 0..n as u64 {
        let current = MARKER_BASE + first_id + i;
        let game = &mut servers[0];
        let got = viewers
            .round(
                first_id + i,
                current,
                direct::send(game, &direct::stats_json(current)),
            )
            .await?;
        measured.add(&got);
        // Let the change settle, as changes spaced in time would.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(measured)
}

fn kb(bytes: f64) -> String {
    if bytes >= 10_000.0 {
        format!("{:.0} KB", bytes / 1000.0)
    } else {
        format!("{:.2} KB", bytes / 1000.0)
    }
}

/// The same change with a remote master (`--master`): the bridge learns it
/// at its next poll, so it waits up to one poll interval.
async fn remote_master(env: &Env) -> Result<(Histogram<u64>, Duration)> {
    let s = &env.sizes;
    let opts = procs::bridge(&env.bins);
    let (master, maddr) = procs::start_master(&env.bins, s.fanout_servers + 100).await?;
    let mut servers = direct::register_servers(maddr, s.fanout_servers, "Polled", 0).await?;
    let (bridge, baddr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    let list = try_until("the bridge's first list", || api_list(baddr)).await?;
    let mut one = Viewers::open(baddr, 1, Mode::Deltas, &subscribe_json(&list)).await?;
    let measured = rounds(&mut one, &mut servers, 500, s.deltas_rounds).await;
    one.close().await;
    bridge.stop().await;
    master.stop().await;
    Ok((measured?.each, procs::POLL_INTERVAL))
}

/// What the change feed run measured.
struct Followed {
    many: Rounds,
    /// Queries the bridge sent the master during the rounds (0: no poll).
    queries: f64,
}

impl Followed {
    /// The figure beside the embedded master's `embedded` from the same run.
    fn row(&self, embedded: &Rounds, s: &crate::Sizes, viewers: usize) -> Row {
        let p99 = embedded.each.value_at_quantile(0.99);
        let feed_p99 = self.many.each.value_at_quantile(0.99);
        Row::new(
            format!(
                "deltas with --master and the master's change feed: game server's TCP stats update → {} delta viewers, {} servers ({} rounds)",
                count(viewers as u64),
                count(s.deltas_servers as u64),
                s.deltas_rounds
            ),
            format!(
                "{}; {} master queries meanwhile",
                self.many.summary(viewers),
                self.queries
            ),
            format!(
                "embedded master, same run: p99 {} (p50 {})",
                q(&embedded.each, 0.99),
                q(&embedded.each, 0.5)
            ),
            times(feed_p99 as f64, p99 as f64),
            "p99 ≤ 150 ms and ≤ 1.5× embedded",
            Verdict::of(feed_p99 <= 150_000 && feed_p99 as f64 <= 1.5 * p99 as f64),
        )
    }
}

/// The same change with a remote master whose change feed the bridge
/// follows (`--master` and `--master-feed`): as many servers and delta
/// viewers as with the embedded master.
async fn remote_feed(env: &Env) -> Result<Followed> {
    let s = &env.sizes;
    let (master, maddr, feed) =
        procs::start_master_with_feed(&env.bins, s.deltas_servers + 100).await?;
    let opts = BridgeLaunch {
        master_feed: MasterFeed::At(feed),
        ..procs::bridge(&env.bins)
    };
    let (bridge, baddr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    // Boxed, as each `/metrics` read below: their 64 KiB read buffers,
    // moved by value in debug builds, overflowed the stack.
    metrics::try_until_metric(baddr, "bridge_master_feed_up", |v| v == 1.0).await?;
    let mut servers = register(maddr, baddr, 0, s.deltas_servers).await?;
    let list = api_list(baddr).await?;
    let mut viewers = Viewers::open(
        baddr,
        s.deltas_viewers,
        Mode::Deltas,
        &subscribe_json(&list),
    )
    .await?;
    let before = metrics::scrape(baddr, "bridge_master_queries_total")
        .await
        .map_err(Error::Unexpected)?;
    let many = rounds(&mut viewers, &mut servers, 100, s.deltas_rounds).await;
    let queries = metrics::scrape(baddr, "bridge_master_queries_total")
        .await
        .map_err(Error::Unexpected)?
        - before;
    viewers.close().await;
    drop(servers);
    bridge.stop().await;
    master.stop().await;
    Ok(Followed {
        many: many?,
        queries,
    })
}

/// Runs the deltas figures.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let load_before = procs::load_average().unwrap_or_else(|| "?".into());
    let (bridge, baddr, maddr) =
        procs::start_bridge_embedded(&env.bins, &procs::bridge(&env.bins)).await?;
    let pid = bridge.pid();
    let n = s.deltas_servers;
    // Baselines of the latency: one delta viewer, first with a short list
    // (what the bridge's work per change costs at 10,000 shows beside it).
    let few = s.fanout_servers.min(n);
    let mut servers = register(maddr, baddr, 0, few).await?;
    let mut one = Viewers::open(
        baddr,
        1,
        Mode::Deltas,
        &subscribe_json(&api_list(baddr).await?),
    )
    .await?;
    let short = rounds(&mut one, &mut servers, 1, s.deltas_rounds).await?;
    one.close().await;
    servers.extend(register(maddr, baddr, few, n).await?);

    // First load: the same list raw, gzip and br.
    let raw = http::get_ok(baddr, "/api/servers", "")
        .await
        .map_err(Error::Unexpected)?;
    let mut packed = Vec::new();
    for enc in ["br", "gzip"] {
        let a = http::get_ok(
            baddr,
            "/api/servers",
            &format!("Accept-Encoding: {enc}\r\n"),
        )
        .await
        .map_err(Error::Unexpected)?;
        if a.header("content-encoding") != Some(enc) {
            return Err(Error::Unexpected(format!(
                "/api/servers ignored Accept-Encoding: {enc}"
            )));
        }
        packed.push((enc, a.body.len()));
    }
    let list = listed(&raw.body)?;
    if list.servers != n {
        return Err(Error::Unexpected(format!(
            "/api/servers lists {} servers, not {n}",
            list.servers
        )));
    }

    let mut one = Viewers::open(baddr, 1, Mode::Deltas, &subscribe_json(&list)).await?;
    let base = rounds(&mut one, &mut servers, 50, s.deltas_rounds).await?;
    one.close().await;

    // Baseline of the CPU: the same churn with no viewer.
    let mut k = 0;
    let (idle_cpu, idle_wall, idle_changes) = churn_cpu(pid, &mut servers, env, &mut k).await?;

    let list = api_list(baddr).await?;
    let v = s.deltas_viewers;
    let mut viewers = Viewers::open(baddr, v, Mode::Deltas, &subscribe_json(&list)).await?;
    let whole = Viewers::open(baddr, 1, Mode::Whole, r#"{"command":"bridgeSubscribe"}"#).await?;
    let load_during = procs::load_average().unwrap_or_else(|| "?".into());
    let before = (
        viewers.counts.bytes.load(Relaxed),
        viewers.counts.messages.load(Relaxed),
        whole.counts.bytes.load(Relaxed),
    );
    let (mixed_cpu, wall, changes) = churn_cpu(pid, &mut servers, env, &mut k).await?;
    // Let the last change arrive before counting.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let secs = wall.as_secs_f64();
    let delta_rate = (viewers.counts.bytes.load(Relaxed) - before.0) as f64 / v as f64 / secs;
    let delta_msgs = (viewers.counts.messages.load(Relaxed) - before.1) as f64 / v as f64;
    let whole_rate = (whole.counts.bytes.load(Relaxed) - before.2) as f64 / secs;
    let fell_back = viewers.counts.snapshots.load(Relaxed);
    viewers.check()?;
    whole.close().await;
    // The bridge's CPU for the delta viewers alone: the whole-list viewer
    // costs it a 1.4 MB write per change.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (cpu, cpu_wall, _) = churn_cpu(pid, &mut servers, env, &mut k).await?;
    viewers.check()?;

    let many = rounds(&mut viewers, &mut servers, 100, s.deltas_rounds).await?;
    viewers.close().await;
    drop(servers);
    bridge.stop().await;
    let (polled, poll) = remote_master(env).await?;
    let followed = Box::pin(remote_feed(env)).await?;

    let servers_n = count(n as u64);
    let viewers_n = count(v as u64);
    let p99 = many.each.value_at_quantile(0.99);
    let raw_len = raw.body.len() as f64;
    let mut rows = vec![Row::new(
        format!(
            "deltas: bytes per viewer per second, one of {servers_n} servers changes every {} ({viewers_n} delta viewers, {:.1} s, embedded master)",
            ms(s.churn_interval.as_micros() as u64),
            secs
        ),
        format!(
            "{}/s ({delta_msgs:.1} deltas per viewer for {changes} changes{})",
            kb(delta_rate),
            if fell_back > 0 {
                format!("; {fell_back} snapshots resent")
            } else {
                String::new()
            }
        ),
        format!("whole-list subscriber: {}/s", kb(whole_rate)),
        if delta_rate > 0.0 {
            format!("1/{:.0}", whole_rate / delta_rate)
        } else {
            "-".into()
        },
        "≤ 2 KB/s",
        Verdict::of(delta_rate <= 2_000.0),
    )];
    rows.push(Row::new(
        format!(
            "deltas: game server's TCP stats update → {viewers_n} delta viewers, embedded master, {servers_n} servers ({} rounds)",
            s.deltas_rounds
        ),
        many.summary(v),
        format!(
            "1 delta viewer: p99 {} (p50 {}); 1 viewer with {} servers listed: p99 {} (p50 {})",
            q(&base.each, 0.99),
            q(&base.each, 0.5),
            count(few as u64),
            q(&short.each, 0.99),
            q(&short.each, 0.5)
        ),
        times(p99 as f64, base.each.value_at_quantile(0.99) as f64),
        "p99 ≤ 150 ms",
        Verdict::of(p99 <= 150_000),
    ));
    rows.push(Row::new(
        format!(
            "deltas with --master (remote master, polled): game server's TCP stats update → 1 delta viewer, {} servers ({} rounds)",
            count(s.fanout_servers as u64),
            s.deltas_rounds
        ),
        format!("p50 {} / p99 {}", q(&polled, 0.5), q(&polled, 0.99)),
        format!("poll interval {}: poll-bound by design", ms(poll.as_micros() as u64)),
        times(polled.value_at_quantile(0.99) as f64, poll.as_micros() as f64),
        "-",
        Verdict::Info,
    ));
    rows.push(followed.row(&many, s, v));
    for (enc, len) in packed {
        rows.push(Row::new(
            format!("first load: GET /api/servers, {servers_n} servers, Accept-Encoding: {enc}"),
            format!(
                "{} ({:.1} % of raw)",
                kb(len as f64),
                100.0 * len as f64 / raw_len
            ),
            format!("raw JSON {}", kb(raw_len)),
            times(len as f64, raw_len),
            "≤ 25 % of raw",
            Verdict::of(len as f64 <= 0.25 * raw_len),
        ));
    }
    rows.push(Row::new(
        format!(
            "deltas: bridge CPU (user+sys) while {viewers_n} delta viewers watch the churn ({:.1} s)",
            cpu_wall.as_secs_f64()
        ),
        format!(
            "{:.1} % of one core ({:.2} s)",
            share(cpu, cpu_wall),
            cpu.as_secs_f64()
        ),
        format!(
            "same churn, no viewers: {:.1} % ({:.2} s, {:.1} ms per change); with 1 whole-list viewer besides the delta viewers: {:.1} %",
            share(idle_cpu, idle_wall),
            idle_cpu.as_secs_f64(),
            idle_cpu.as_secs_f64() * 1000.0 / idle_changes.max(1) as f64,
            share(mixed_cpu, wall)
        ),
        times(share(cpu, cpu_wall), share(idle_cpu, idle_wall)),
        "-",
        Verdict::Info,
    ));
    rows.push(Row::new(
        "deltas: machine load (1-min load average, 2 cores shared)",
        format!("{load_during} with the viewers"),
        format!("{load_before} at the phase's start"),
        "-",
        "-",
        Verdict::Info,
    ));
    Ok(rows)
}
