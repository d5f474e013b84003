//! What idle bridges cost the master: eight bridges that follow its change
//! feed against the same eight polling it, each over the same window: the
//! list queries they send (`bridge_master_queries_total` on each) and the
//! master's CPU (`/proc/PID/stat`).

use std::{net::SocketAddr, time::Duration, time::Instant};

use lobby_testkit::metrics;

use crate::{
    direct,
    error::{Error, Result},
    phases::Env,
    procs::{self, BridgeLaunch, MasterFeed, Proc},
    report::{Row, Verdict},
};

/// Idle bridges in front of one master.
pub(super) const BRIDGES: usize = 8;

const QUERIES: &str = "bridge_master_queries_total";

/// What one window measured.
struct Window {
    /// List queries all bridges sent the master.
    queries: f64,
    /// The master's CPU time over the window.
    cpu: Duration,
    wall: Duration,
}

impl Window {
    fn per_sec(&self) -> f64 {
        self.queries / self.wall.as_secs_f64().max(1e-9)
    }

    /// The master's CPU as % of one core.
    fn share(&self) -> f64 {
        100.0 * self.cpu.as_secs_f64() / self.wall.as_secs_f64().max(1e-9)
    }
}

/// Starts [`BRIDGES`] bridges (following `feed` when given), lets them
/// settle, then counts their queries and the master's CPU for `window`.
async fn measure(
    env: &Env,
    master: &Proc,
    maddr: SocketAddr,
    feed: Option<SocketAddr>,
    window: Duration,
) -> Result<Window> {
    let opts = BridgeLaunch {
        master_feed: feed.map_or(MasterFeed::Off, MasterFeed::At),
        ..procs::bridge(&env.bins)
    };
    let mut bridges = Vec::with_capacity(BRIDGES);
    for _ in 0..BRIDGES {
        bridges.push(procs::start_bridge(&env.bins, maddr, &opts).await?);
    }
    let wanted = if feed.is_some() {
        "bridge_master_feed_up"
    } else {
        "bridge_master_up"
    };
    for (_, addr) in &bridges {
        metrics::try_until_metric(*addr, wanted, |v| v == 1.0).await?;
    }
    // Past the first polls and subscriptions.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut before = 0.0;
    for (_, addr) in &bridges {
        before += metrics::scrape(*addr, QUERIES)
            .await
            .map_err(Error::Unexpected)?;
    }
    let cpu = procs::cpu_time(master.pid())?;
    let start = Instant::now();
    tokio::time::sleep(window).await;
    let cpu = procs::cpu_time(master.pid())? - cpu;
    let wall = start.elapsed();
    let mut after = 0.0;
    for (_, addr) in &bridges {
        after += metrics::scrape(*addr, QUERIES)
            .await
            .map_err(Error::Unexpected)?;
    }
    for (bridge, _) in bridges {
        bridge.stop().await;
    }
    Ok(Window {
        queries: after - before,
        cpu,
        wall,
    })
}

/// One clock tick of `/proc/PID/stat` as % of one core over `wall`.
fn tick_share(wall: Duration) -> f64 {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    100.0 / hz / wall.as_secs_f64().max(1e-9)
}

/// The row: eight bridges following the feed against the same polling.
pub(super) async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let window = 2 * s.scaleout_window;
    let (master, maddr, feed) = procs::start_master_with_feed(&env.bins, 1_000).await?;
    let servers = direct::register_servers(maddr, s.scaleout_servers, "Idle", 0).await?;
    let followed = measure(env, &master, maddr, Some(feed), window).await?;
    let polled = measure(env, &master, maddr, None, window).await?;
    drop(servers);
    master.stop().await;
    let poll = procs::POLL_INTERVAL;
    Ok(vec![Row::new(
        format!(
            "scale-out: master with {BRIDGES} idle bridges following its change feed, {} servers ({:.1} s)",
            s.scaleout_servers,
            followed.wall.as_secs_f64()
        ),
        format!(
            "{:.0} list queries ({:.2}/s); master CPU {:.2} % of one core ({:.2} s)",
            followed.queries,
            followed.per_sec(),
            followed.share(),
            followed.cpu.as_secs_f64()
        ),
        format!(
            "the same {BRIDGES} polling every {}: {:.2} queries/s ({:.0}), master CPU {:.2} % ({:.2} s); CPU is read in ticks of {:.2} % of this window",
            crate::report::ms(poll.as_micros() as u64),
            polled.per_sec(),
            polled.queries,
            polled.share(),
            polled.cpu.as_secs_f64(),
            tick_share(followed.wall)
        ),
        "-",
        "0 list queries, master CPU < 1 % of a core",
        Verdict::of(followed.queries == 0.0 && followed.share() < 1.0),
    )])
}
