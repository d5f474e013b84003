//! 100,000 delta viewers: one master with its change feed, N bridges that
//! follow it (`--master` and `--master-feed`, each holding at most 25,000
//! viewers), and one load generator whose viewers come from many loopback
//! addresses (each socket bound to 127.0.0.x before it connects, so one
//! address's ephemeral ports never run out). The viewers are held, then one
//! game server's change has to reach every one of them.
//!
//! Run only when asked (`--only scale100k`), never in the smoke run or CI:
//! it takes minutes and gigabytes. The viewers live in this one process
//! (about 10 KiB each here, so 1 GiB for 100,000; its file-descriptor limit
//! is raised for them, the hard limit too when run as root).

use std::{
    net::{Ipv4Addr, SocketAddr},
    sync::{
        atomic::{AtomicUsize, Ordering::Relaxed},
        Arc,
    },
    time::{Duration, Instant},
};

use futures_util::StreamExt;
use tokio_tungstenite::tungstenite::Message;

use crate::{
    direct,
    error::{within, Error, Result},
    phases::{
        crowd::{Crowd, Member, Rounds},
        deltas::{list::api_list, viewers::subscribe_json},
        Env,
    },
    procs::{self, BridgeOptions, Proc},
    report::{count, q, Row, Verdict},
    ws,
};

const SNAPSHOT_PREFIX: &str = r#"{"command":"bridgeSnapshot""#;
const DELTA_PREFIX: &str = r#"{"command":"bridgeDelta""#;
const VIEWERS: &str = "bridge_connections{role=\"viewer\"}";

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
    fn of(env: &Env) -> Self {
        if env.sizes.smoke {
            Self {
                viewers: 200,
                bridges: 2,
                servers: 5,
                per_source: 50,
                hold: Duration::from_secs(1),
                rounds: 1,
            }
        } else {
            Self {
                viewers: 100_000,
                bridges: 5,
                servers: 100,
                per_source: 5_000,
                hold: Duration::from_secs(30),
                rounds: 3,
            }
        }
    }

    fn per_bridge(&self) -> usize {
        self.viewers.div_ceil(self.bridges)
    }

    /// Viewers one source address opens on one bridge (the bridges'
    /// per-address caps are set just above it).
    fn per_source_per_bridge(&self) -> usize {
        self.per_source.div_ceil(self.bridges)
    }

    /// Viewer `i`'s bridge and source address: bridges in turn, a new
    /// address every `per_source` viewers.
    fn place(&self, i: usize) -> (usize, Ipv4Addr) {
        let a = 2 + i / self.per_source;
        let source = Ipv4Addr::new(127, 0, (a >> 8) as u8, (a & 0xff) as u8);
        (i % self.bridges, source)
    }
}

/// Raises this process's file-descriptor limit (soft, and hard when
/// allowed: as root up to `/proc/sys/fs/nr_open`) to at least `needed`;
/// children started afterwards inherit it. Returns the soft limit.
fn raise_fd_limit(needed: u64) -> Result<u64> {
    use rlimit::Resource;
    let (soft, hard) = Resource::NOFILE.get()?;
    if soft >= needed {
        return Ok(soft);
    }
    if hard < needed {
        let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(hard);
        let want = needed.min(nr_open);
        if Resource::NOFILE.set(want, want).is_err() {
            return Err(Error::Unexpected(format!(
                "file-descriptor hard limit {hard} is below the {needed} this phase needs, \
                 and it cannot be raised (run as root, or raise `ulimit -Hn`)"
            )));
        }
    } else {
        Resource::NOFILE.set(needed, hard)?;
    }
    let (soft, _) = Resource::NOFILE.get()?;
    if soft < needed {
        return Err(Error::Unexpected(format!(
            "file-descriptor limit {soft} is below the {needed} this phase needs"
        )));
    }
    Ok(soft)
}

/// One delta viewer from `source`: subscribes as a page that loaded the
/// list first, then reports each round's change when it sees it.
async fn viewer(
    bridge: SocketAddr,
    source: Ipv4Addr,
    subscribe: Arc<str>,
    mut member: Member,
) -> Result<()> {
    let permit = member.connecting().await;
    let mut socket = ws::connect_from(bridge, source).await?;
    ws::send(&mut socket, &subscribe).await?;
    loop {
        let text = ws::next_text(&mut socket).await?;
        if text.as_str().starts_with(SNAPSHOT_PREFIX) || text.as_str().starts_with(DELTA_PREFIX) {
            break;
        }
    }
    drop(permit);
    member.ready();
    let stop = member.stop().clone();
    loop {
        let msg = tokio::select! {
            biased;
            () = stop.cancelled() => return Ok(()),
            msg = socket.next() => msg,
        };
        match msg {
            Some(Ok(Message::Text(text))) => member.saw(text.as_str()).await,
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => return Err(Error::Unexpected("bridge closed a viewer".into())),
        }
    }
}

/// CPU time of each process in `pids`.
fn cpu_times(pids: &[u32]) -> Result<Vec<Duration>> {
    pids.iter().map(|p| procs::cpu_time(*p)).collect()
}

fn share(cpu: Duration, wall: Duration) -> f64 {
    100.0 * cpu.as_secs_f64() / wall.as_secs_f64().max(1e-9)
}

/// CPU used between two readings, as "a + b + … % of one core".
fn shares(before: &[Duration], after: &[Duration], wall: Duration) -> (String, f64) {
    let each: Vec<f64> = before
        .iter()
        .zip(after)
        .map(|(b, a)| share(a.saturating_sub(*b), wall))
        .collect();
    let listed: Vec<String> = each.iter().map(|s| format!("{s:.1}")).collect();
    (listed.join(" + "), each.iter().sum())
}

/// Runs the 100,000-viewer figures.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let sc = Scale::of(env);
    let nofile = raise_fd_limit(sc.viewers as u64 + 4_096)?;
    eprintln!(
        "[loadgen] scale100k: {} viewers on {} bridges, fd limit {nofile}",
        sc.viewers, sc.bridges
    );
    let (master, maddr, feed) = procs::start_master_with_feed(&env.bins, sc.servers + 100).await?;
    let mut servers = direct::register_servers(maddr, sc.servers, "Scale", 0).await?;
    let opts = BridgeOptions {
        master_feed: Some(feed),
        max_connections: sc.per_bridge() + 16,
        per_address: Some(sc.per_source_per_bridge() + 16),
        ..BridgeOptions::default()
    };
    let mut bridges: Vec<(Proc, SocketAddr)> = Vec::with_capacity(sc.bridges);
    for _ in 0..sc.bridges {
        bridges.push(procs::start_bridge(&env.bins, maddr, &opts).await?);
    }
    let mut subscribes = Vec::with_capacity(sc.bridges);
    for (_, addr) in &bridges {
        let addr = *addr;
        let list = Box::pin(within(
            Duration::from_secs(20),
            "a bridge follows the feed and lists every server",
            async {
                loop {
                    if procs::bridge_metric(addr, "bridge_master_feed_up")
                        .await
                        .ok()
                        == Some(1.0)
                    {
                        if let Ok(l) = api_list(addr).await {
                            if l.servers == sc.servers {
                                return Ok(l);
                            }
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        ))
        .await?;
        subscribes.push(Arc::<str>::from(subscribe_json(&list)));
    }
    // Settled: the bridges' first lists, one viewer opened and closed each.
    for (_, addr) in &bridges {
        let mut w = ws::connect_small(&ws::url(*addr)).await?;
        ws::send(&mut w, &subscribe_json(&api_list(*addr).await?)).await?;
        ws::next_text(&mut w).await?;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before: Vec<u64> = bridges
        .iter()
        .map(|(p, _)| p.rss_kib())
        .collect::<Result<_>>()?;
    let own_before = procs::rss_kib(std::process::id())?;

    let opened = Instant::now();
    let next = AtomicUsize::new(0);
    let addrs: Vec<SocketAddr> = bridges.iter().map(|(_, a)| *a).collect();
    let mut crowd = Crowd::open(sc.viewers, "scale viewers", |member| {
        let i = next.fetch_add(1, Relaxed);
        let (b, source) = sc.place(i);
        viewer(addrs[b], source, subscribes[b].clone(), member)
    })
    .await?;
    let open_time = opened.elapsed();
    eprintln!(
        "[loadgen] scale100k: {} viewers subscribed in {open_time:.1?}",
        sc.viewers
    );

    // Held: every viewer stays, the bridges and the master idle meanwhile.
    let mut pids: Vec<u32> = bridges.iter().map(|(p, _)| p.pid()).collect();
    pids.push(master.pid());
    let cpu0 = cpu_times(&pids)?;
    let held = Instant::now();
    tokio::time::sleep(sc.hold).await;
    let hold_wall = held.elapsed();
    let cpu1 = cpu_times(&pids)?;
    crowd.check()?;
    let mut on_bridges = Vec::with_capacity(sc.bridges);
    for (_, addr) in &bridges {
        on_bridges.push(procs::bridge_metric(*addr, VIEWERS).await? as u64);
    }
    let rss_with: Vec<u64> = bridges
        .iter()
        .map(|(p, _)| p.rss_kib())
        .collect::<Result<_>>()?;
    let own_with = procs::rss_kib(std::process::id())?;

    // One game server's change, several times.
    let mut delivered = Rounds::new();
    let rounds_started = Instant::now();
    for i in 0..sc.rounds as u64 {
        let current = 50_000 + i;
        let game = &mut servers[0];
        let got = crowd
            .round(
                i + 1,
                current,
                direct::send(game, &direct::stats_json(current)),
            )
            .await?;
        delivered.add(&got);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let rounds_wall = rounds_started.elapsed();
    let cpu2 = cpu_times(&pids)?;
    crowd.check()?;
    crowd.close().await;
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
    let mib = |kib: &[u64]| {
        kib.iter()
            .map(|k| format!("{:.0}", *k as f64 / 1024.0))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let (hold_bridges, hold_sum) = shares(&cpu0[..n], &cpu1[..n], hold_wall);
    let (_, hold_master) = shares(&cpu0[n..], &cpu1[n..], hold_wall);
    let (round_bridges, round_sum) = shares(&cpu1[..n], &cpu2[..n], rounds_wall);
    let (_, round_master) = shares(&cpu1[n..], &cpu2[n..], rounds_wall);
    let p99 = delivered.each.value_at_quantile(0.99);
    let viewers_n = count(sc.viewers as u64);
    let sources = sc.viewers.div_ceil(sc.per_source);
    Ok(vec![
        Row::new(
            format!(
                "scale100k: {viewers_n} delta viewers held {:?} on {n} bridges following the master's feed ({} viewers from each of {sources} loopback addresses)",
                sc.hold,
                count(sc.per_source as u64)
            ),
            format!(
                "{} open per the bridges ({}), 0 errors; all subscribed in {:.1} s",
                count(held_n),
                on_bridges
                    .iter()
                    .map(|v| count(*v))
                    .collect::<Vec<_>>()
                    .join(" + "),
                open_time.as_secs_f64()
            ),
            format!(
                "per bridge ≤ {} (--max-connections {}, --max-ws-per-address {})",
                count(sc.per_bridge() as u64),
                opts.max_connections,
                sc.per_source_per_bridge() + 16
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
                mib(&rss_with)
            ),
            format!(
                "before the viewers {} MiB; the load generator {:.0} → {:.0} MiB",
                mib(&rss_before),
                own_before as f64 / 1024.0,
                own_with as f64 / 1024.0
            ),
            "-",
            "≤ 10 KiB per viewer",
            Verdict::of(worst_kib <= 10.0),
        ),
        Row::new(
            format!(
                "scale100k: CPU, % of one core (bridges each; master), holding {:.0} s / during the rounds ({:.1} s)",
                hold_wall.as_secs_f64(),
                rounds_wall.as_secs_f64()
            ),
            format!(
                "holding: bridges {hold_bridges} = {hold_sum:.1} %, master {hold_master:.2} %; rounds: bridges {round_bridges} = {round_sum:.1} %, master {round_master:.2} %"
            ),
            format!(
                "load average {}",
                procs::load_average().unwrap_or_else(|| "?".into())
            ),
            "-",
            "-",
            Verdict::Info,
        ),
    ])
}
