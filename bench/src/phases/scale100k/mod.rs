//! 100,000 delta viewers: one master with its change feed, N bridges that
//! follow it (`--master` and `--master-feed`, each holding at most 25,000
//! viewers), and viewers that come from many loopback addresses (each
//! socket bound to 127.0.0.x before it connects, so one address's ephemeral
//! ports never run out). The viewers are held, then one game server's
//! change has to reach every one of them.
//!
//! One process holds at most its file-descriptor limit of sockets, and
//! without `CAP_SYS_RESOURCE` (as here, even as root) the hard limit cannot
//! be raised: the viewers live in [`worker`] processes, one per bridge, and
//! each bridge holds no more than fits under the limit, so the number of
//! bridges follows from it (6 at the usual 20,000; 4 where 25,000 fit).
//!
//! Run only when asked (`--only scale100k`), never in the smoke run or CI:
//! it takes minutes and gigabytes.

mod worker;

pub use worker::worker;

use std::{
    net::SocketAddr,
    process::Stdio,
    time::{Duration, Instant},
};

use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines},
    process::{Child, ChildStdin, ChildStdout, Command},
};

use lobby_testkit::{metrics, try_until, HUNG};

use crate::{
    direct,
    error::{within_for, Error, Result},
    phases::{
        crowd::Rounds,
        deltas::{list::api_list, viewers::subscribe_json},
        Env,
    },
    procs::{self, BridgeLaunch, MasterFeed, Proc},
    report::{count, q, Row, Verdict},
    ws,
};
use worker::{monotonic_us, Spec};

const VIEWERS: &str = "bridge_connections{role=\"viewer\"}";

/// The most viewers one bridge holds (the task's bound).
const MAX_PER_BRIDGE: usize = 25_000;

/// Descriptors a bridge or a worker keeps besides its viewers' sockets.
const SPARE_FDS: u64 = 1_024;

/// How big the run is.
struct Scale {
    viewers: usize,
    bridges: usize,
    servers: usize,
    /// Viewers per source address (127.0.0.2 upwards).
    per_source: usize,
    hold: Duration,
    rounds: usize,
}

impl Scale {
    /// The run's size; the number of bridges follows from `nofile`, the
    /// descriptors each process may hold.
    fn of(env: &Env, nofile: u64) -> Self {
        let (viewers, servers, per_source, hold, rounds) = if env.sizes.smoke {
            (200, 5, 50, Duration::from_secs(1), 1)
        } else {
            (100_000, 100, 5_000, Duration::from_secs(30), 3)
        };
        let fit = (nofile.saturating_sub(SPARE_FDS) as usize).clamp(1, MAX_PER_BRIDGE);
        Self {
            viewers,
            bridges: viewers.div_ceil(fit).max(2),
            servers,
            per_source,
            hold,
            rounds,
        }
    }

    /// The viewers of bridge `b` (and of its worker): `(first, count)`.
    fn share_of(&self, b: usize) -> (usize, usize) {
        let per = self.viewers.div_ceil(self.bridges);
        let first = (b * per).min(self.viewers);
        (first, per.min(self.viewers - first))
    }
}

/// Tries to raise this process's file-descriptor limit, hard limit too,
/// to what a bridge of [`MAX_PER_BRIDGE`] viewers needs (children started
/// afterwards inherit it); without the privilege it stays as it is.
/// Returns the soft limit.
fn raise_fd_limit() -> Result<u64> {
    use rlimit::Resource;
    let wanted = MAX_PER_BRIDGE as u64 + SPARE_FDS;
    let (_, hard) = Resource::NOFILE.get()?;
    if hard < wanted {
        let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(hard);
        let want = wanted.min(nr_open);
        // Refused without CAP_SYS_RESOURCE: more bridges and workers then.
        let _ = Resource::NOFILE.set(want, want);
    }
    Ok(rlimit::increase_nofile_limit(u64::MAX)?)
}

/// A worker process and its two pipes.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Worker {
    /// Starts `loadgen --scale-worker` and hands it `spec`.
    async fn start(spec: &Spec) -> Result<Self> {
        let mut child = Command::new(std::env::current_exe()?)
            .arg("--scale-worker")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Error::Unexpected("a worker without pipes".into()));
        };
        let mut w = Self {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
        };
        w.send(&spec.to_json()).await?;
        Ok(w)
    }

    fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    async fn send(&mut self, line: &str) -> Result<()> {
        self.stdin.write_all(format!("{line}\n").as_bytes()).await?;
        Ok(self.stdin.flush().await?)
    }

    /// The worker's next line, which must start with `word`; the rest.
    /// `limit` only guards against a hung worker (never below [`HUNG`]).
    async fn expect(&mut self, word: &str, limit: Duration) -> Result<String> {
        let line = within_for(limit, format!("a worker's {word:?}"), async {
            Ok(self.lines.next_line().await?)
        })
        .await?
        .ok_or_else(|| Error::Unexpected(format!("a worker exited before {word:?}")))?;
        match line.split_once(' ').unwrap_or((line.as_str(), "")) {
            (w, rest) if w == word => Ok(rest.to_owned()),
            ("failed", why) => Err(Error::Unexpected(format!("a worker failed: {why}"))),
            _ => Err(Error::Unexpected(format!(
                "a worker said {:.120} instead of {word:?}",
                line
            ))),
        }
    }

    async fn close(mut self) {
        if self.send("close").await.is_ok() {
            let _ = self.expect("closed", HUNG).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

/// One round: every worker looks for the marker, the game server changes
/// its stats, and each viewer's delay since that change comes back.
async fn round(
    workers: &mut [Worker],
    game: &mut direct::Conn,
    id: u64,
    current: u64,
) -> Result<Vec<Duration>> {
    for w in workers.iter_mut() {
        w.send(&format!("arm {id} {current}")).await?;
    }
    for w in workers.iter_mut() {
        w.expect("armed", HUNG).await?;
    }
    let changed = monotonic_us();
    direct::send(game, &direct::stats_json(current)).await?;
    let mut got = Vec::new();
    for w in workers.iter_mut() {
        let rest = w.expect("seen", HUNG).await?;
        let times = rest.split_once(' ').map_or("", |(_, t)| t);
        for t in times.split(',').filter(|t| !t.is_empty()) {
            let t: u64 = t
                .parse()
                .map_err(|_| Error::Unexpected(format!("a worker's time {t:?}")))?;
            got.push(Duration::from_micros(t.saturating_sub(changed)));
        }
    }
    Ok(got)
}

/// CPU time of each process in `pids`.
fn cpu_times(pids: &[u32]) -> Result<Vec<Duration>> {
    pids.iter().map(|p| Ok(procs::cpu_time(*p)?)).collect()
}

fn share(cpu: Duration, wall: Duration) -> f64 {
    100.0 * cpu.as_secs_f64() / wall.as_secs_f64().max(1e-9)
}

/// CPU used between two readings, as "a + b + …" % of one core, and the sum.
fn shares(before: &[Duration], after: &[Duration], wall: Duration) -> (String, f64) {
    let each: Vec<f64> = before
        .iter()
        .zip(after)
        .map(|(b, a)| share(a.saturating_sub(*b), wall))
        .collect();
    let listed: Vec<String> = each.iter().map(|s| format!("{s:.1}")).collect();
    (listed.join(" + "), each.iter().sum())
}

fn joined<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    items.iter().map(f).collect::<Vec<_>>().join(" + ")
}

fn rss_all(pids: &[u32]) -> Result<Vec<u64>> {
    Ok(pids
        .iter()
        .map(|p| procs::rss_kib(*p))
        .collect::<lobby_testkit::Result<_>>()?)
}

/// A bridge's list once it follows the feed and lists every server.
async fn feed_list(addr: SocketAddr, servers: usize) -> Result<String> {
    metrics::try_until_metric(addr, "bridge_master_feed_up", |v| v == 1.0).await?;
    let list = Box::pin(try_until(
        "a bridge following the feed to list every server",
        || async {
            match api_list(addr).await {
                Ok(l) if l.servers == servers => Ok(l),
                Ok(l) => Err(format!("{} listed", l.servers)),
                Err(e) => Err(e.to_string()),
            }
        },
    ))
    .await?;
    Ok(subscribe_json(&list))
}

/// Runs the 100,000-viewer figures.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let load_start = procs::load_average().unwrap_or_else(|| "?".into());
    let nofile = raise_fd_limit()?;
    let sc = Scale::of(env, nofile);
    eprintln!(
        "[loadgen] scale100k: {} viewers on {} bridges (a worker each), fd limit {nofile}",
        sc.viewers, sc.bridges
    );
    let (master, maddr, feed) = procs::start_master_with_feed(&env.bins, sc.servers + 100).await?;
    let mut servers = direct::register_servers(maddr, sc.servers, "Scale", 0).await?;
    let (_, most) = sc.share_of(0);
    let per_address = sc.per_source + 16;
    let max_connections = most + 16;
    let opts = BridgeLaunch {
        master_feed: MasterFeed::At(feed),
        ..procs::bridge_for(&env.bins, max_connections, Some(per_address))
    };
    let mut bridges: Vec<(Proc, SocketAddr)> = Vec::with_capacity(sc.bridges);
    for _ in 0..sc.bridges {
        bridges.push(procs::start_bridge(&env.bins, maddr, &opts).await?);
    }
    // Settled: each bridge follows the feed, has its list, and has had one
    // viewer come and go.
    let mut subscribes = Vec::with_capacity(sc.bridges);
    for (_, addr) in &bridges {
        let subscribe = feed_list(*addr, sc.servers).await?;
        let mut w = ws::connect_small(&ws::url(*addr)).await?;
        ws::send(&mut w, &subscribe).await?;
        ws::next_text(&mut w).await?;
        subscribes.push(subscribe);
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let bridge_pids: Vec<u32> = bridges.iter().map(|(p, _)| p.pid()).collect();
    let rss_before = rss_all(&bridge_pids)?;

    let opened = Instant::now();
    let mut workers = Vec::with_capacity(sc.bridges);
    for (b, ((_, addr), subscribe)) in bridges.iter().zip(&subscribes).enumerate() {
        let (first, count) = sc.share_of(b);
        workers.push(
            Worker::start(&Spec {
                bridge: *addr,
                subscribe: subscribe.clone(),
                first,
                count,
                per_source: sc.per_source,
            })
            .await?,
        );
    }
    for w in &mut workers {
        // A worker connects its share of 100,000 viewers.
        w.expect("ready", Duration::from_secs(600)).await?;
    }
    let open_time = opened.elapsed();
    eprintln!("[loadgen] scale100k: all viewers subscribed in {open_time:.1?}");
    let worker_pids: Vec<u32> = workers.iter().map(Worker::pid).collect();

    // Held: every viewer stays; the bridges and the master idle meanwhile.
    // Bridges, then the master, then the workers (the load generator's own
    // share of the two cores).
    let mut pids = bridge_pids.clone();
    pids.push(master.pid());
    pids.extend(&worker_pids);
    let cpu0 = cpu_times(&pids)?;
    let held = Instant::now();
    tokio::time::sleep(sc.hold).await;
    let hold_wall = held.elapsed();
    let cpu1 = cpu_times(&pids)?;
    for w in &mut workers {
        w.send("check").await?;
        w.expect("ok", HUNG).await?;
    }
    let mut on_bridges = Vec::with_capacity(sc.bridges);
    for (_, addr) in &bridges {
        on_bridges.push(
            metrics::scrape(*addr, VIEWERS)
                .await
                .map_err(Error::Unexpected)? as u64,
        );
    }
    let rss_with = rss_all(&bridge_pids)?;
    let workers_rss: u64 = rss_all(&worker_pids)?.iter().sum();

    // One game server's change, several times, a second apart.
    let mut delivered = Rounds::new();
    let rounds_started = Instant::now();
    for i in 0..sc.rounds as u64 {
        let got = round(&mut workers, &mut servers[0], i + 1, 50_000 + i).await?;
        if got.len() != sc.viewers {
            return Err(Error::Unexpected(format!(
                "{} of {} viewers reported round {}",
                got.len(),
                sc.viewers,
                i + 1
            )));
        }
        delivered.add(&got);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let rounds_wall = rounds_started.elapsed();
    let cpu2 = cpu_times(&pids)?;
    for w in &mut workers {
        w.send("check").await?;
        w.expect("ok", HUNG).await?;
    }
    for w in workers {
        w.close().await;
    }
    for (bridge, _) in bridges {
        bridge.stop().await;
    }
    drop(servers);
    master.stop().await;

    let n = sc.bridges;
    let held_n: u64 = on_bridges.iter().sum();
    let kib_per: Vec<f64> = rss_before
        .iter()
        .zip(&rss_with)
        .zip(&on_bridges)
        .map(|((b, w), v)| w.saturating_sub(*b) as f64 / (*v).max(1) as f64)
        .collect();
    let worst_kib = kib_per.iter().copied().fold(0.0, f64::max);
    let mib = |kib: &u64| format!("{:.0}", *kib as f64 / 1024.0);
    let (hold_bridges, hold_sum) = shares(&cpu0[..n], &cpu1[..n], hold_wall);
    let (_, hold_master) = shares(&cpu0[n..=n], &cpu1[n..=n], hold_wall);
    let (round_bridges, round_sum) = shares(&cpu1[..n], &cpu2[..n], rounds_wall);
    let (_, round_master) = shares(&cpu1[n..=n], &cpu2[n..=n], rounds_wall);
    let (_, round_workers) = shares(&cpu1[n + 1..], &cpu2[n + 1..], rounds_wall);
    // CPU per viewer per change, µs: what one delivery costs each side.
    let deliveries = (sc.viewers * sc.rounds).max(1) as f64;
    let per_delivery = |sum: f64| sum / 100.0 * rounds_wall.as_secs_f64() * 1e6 / deliveries;
    let p99 = delivered.each.value_at_quantile(0.99);
    let viewers_n = count(sc.viewers as u64);
    let sources = sc.viewers.div_ceil(sc.per_source);
    Ok(vec![
        Row::new(
            format!(
                "scale100k: {viewers_n} delta viewers held {:?} on {n} bridges following the master's feed ({} viewers from each of {sources} loopback addresses, {n} worker processes)",
                sc.hold,
                count(sc.per_source as u64)
            ),
            format!(
                "{} open per the bridges ({}), 0 errors; all subscribed in {:.1} s",
                count(held_n),
                joined(&on_bridges, |v| count(*v)),
                open_time.as_secs_f64()
            ),
            format!(
                "per bridge ≤ {} (--max-connections {}, --max-ws-per-address {per_address}); fd limit per process {nofile}",
                count(most as u64),
                max_connections,
            ),
            "-",
            "all held, 0 errors",
            Verdict::of(held_n == sc.viewers as u64),
        ),
        Row::new(
            format!(
                "scale100k: game server's TCP stats update → {viewers_n} delta viewers on {n} bridges ({} rounds)",
                sc.rounds
            ),
            delivered.summary(sc.viewers),
            format!(
                "{} servers listed; p50 {}",
                sc.servers,
                q(&delivered.each, 0.5)
            ),
            "-",
            "p99 ≤ 1 s, 0 errors",
            Verdict::of(p99 <= 1_000_000),
        ),
        Row::new(
            "scale100k: bridge RSS per viewer ((with viewers − before) / viewers, each bridge)",
            format!(
                "{} KiB/viewer; RSS {} MiB",
                kib_per
                    .iter()
                    .map(|k| format!("{k:.1}"))
                    .collect::<Vec<_>>()
                    .join(" / "),
                joined(&rss_with, mib)
            ),
            format!(
                "before the viewers {} MiB; the {n} workers {:.0} MiB in all",
                joined(&rss_before, mib),
                workers_rss as f64 / 1024.0
            ),
            "-",
            "≤ 10 KiB per viewer",
            Verdict::of(worst_kib <= 10.0),
        ),
        Row::new(
            format!(
                "scale100k: CPU, % of one core (each bridge; master), holding {:.0} s / during the rounds ({:.1} s)",
                hold_wall.as_secs_f64(),
                rounds_wall.as_secs_f64()
            ),
            format!(
                "holding: bridges {hold_bridges} = {hold_sum:.1} %, master {hold_master:.2} %; rounds: bridges {round_bridges} = {round_sum:.1} %, master {round_master:.2} %; per viewer per change: bridges {:.1} µs, the load generator's workers {:.1} µs ({round_workers:.1} %)",
                per_delivery(round_sum),
                per_delivery(round_workers)
            ),
            format!(
                "load average {} at the start, {} after the rounds (2 cores, shared)",
                load_start,
                procs::load_average().unwrap_or_else(|| "?".into())
            ),
            "-",
            "-",
            Verdict::Info,
        ),
    ])
}
