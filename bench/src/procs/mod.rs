//! The real `master` and `bridge` binaries as child processes, started by
//! the test kit's launcher (`lobby_testkit::launch`: their flags and ready
//! lines) with the run's binaries, sizes and work directory, and the
//! outside views of them the benchmark needs: resident memory from
//! `/proc`, and CPU pinning with `taskset`. Their `/metrics` and plain
//! HTTP are the test kit's (`lobby_testkit::metrics`, `http`).

pub mod nginx;
mod system;

pub use lobby_testkit::procfs::{cpu_time, rss_kib, thread_cpu_time};
pub use system::{affinity, load_average, pin, taskset_available};

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    time::Duration,
};

use lobby_testkit::launch::{self, FeedListen, MasterLaunch};
pub use lobby_testkit::launch::{BridgeLaunch, MasterFeed};

use crate::error::{Error, Result};

/// Where the programs under test are, and where the run keeps its files.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// The `master` executable.
    pub master: PathBuf,
    /// The `bridge` executable.
    pub bridge: PathBuf,
    /// The built front end the bridge serves (`dist/`).
    pub static_dir: PathBuf,
    /// The admin token file the bridges are given (the kit's
    /// `write_admin_token`, in `work`).
    pub admin_token: PathBuf,
    /// Logs of the children and the admin token file.
    pub work: PathBuf,
}

/// A running child (the test kit's: in its own process group, killed with
/// it when dropped), stopped politely by [`Proc::stop`].
#[derive(Debug)]
pub struct Proc(lobby_testkit::process::Proc);

impl Proc {
    /// The process id (what `taskset` pins and `/proc` describes).
    pub fn pid(&self) -> u32 {
        self.0.pid()
    }

    /// Resident memory (`VmRSS` of `/proc/PID/status`) in KiB.
    pub fn rss_kib(&self) -> Result<u64> {
        Ok(rss_kib(self.pid())?)
    }

    /// SIGKILL at once, as a crash or the OOM killer would (nothing is
    /// shut down: sockets are closed by the kernel), and waits for it to be
    /// gone.
    pub async fn kill(mut self) -> Result<()> {
        self.0.kill();
        Ok(())
    }

    /// SIGTERM, then SIGKILL if it has not exited within 5 s. Waits on
    /// the runtime's clock, so the run's other tasks (the clients a
    /// graceful shutdown says goodbye to) go on meanwhile.
    pub async fn stop(mut self) {
        self.0.signal(libc::SIGTERM);
        let exited = tokio::time::timeout(Duration::from_secs(5), async {
            while self.0.exit_status().is_none() {
                tokio::time::sleep(lobby_testkit::POLL).await;
            }
        })
        .await;
        if exited.is_err() {
            eprintln!(
                "[loadgen] pid {} did not stop on SIGTERM; killing it",
                self.pid()
            );
        }
        // Dropped: its process group is killed (nothing, if it exited).
    }
}

/// The poll interval of the benchmark's bridges (`--poll-interval`).
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// A rate limit out of reach (`--rate-limit`/`--rate-burst`): the relay
/// figures measure the relay, not the limiter (20/s by default).
pub const UNLIMITED: Option<u64> = Some(1_000_000_000);

/// A benchmark bridge as the kit's launcher takes it: the run's binary,
/// front end and admin token, the poll interval [`POLL_INTERVAL`], room
/// for 10,000 connections (see [`bridge_for`]), logging warnings only.
/// A phase sets the fields that differ (`--master-feed`,
/// `--history-interval`, `--database-url`, …); the bridge's data
/// directory, unless the phase names one, is a fresh one per bridge.
pub fn bridge(bins: &Binaries) -> BridgeLaunch {
    bridge_for(bins, 10_000, None)
}

/// [`bridge`] with room for `max_connections` connections. Every
/// load-generating client comes from 127.0.0.1 unless `per_address` says
/// how many come from each of many addresses: the per-address caps are
/// lifted to the connection count (or `per_address`, and 64 more for
/// HTTP), and the budget of list answers (each viewer's first list,
/// `/api/servers`) out of reach.
pub fn bridge_for(
    bins: &Binaries,
    max_connections: usize,
    per_address: Option<usize>,
) -> BridgeLaunch {
    let mut launch = BridgeLaunch::new(
        bins.bridge.clone(),
        bins.static_dir.clone(),
        bins.admin_token.clone(),
    );
    let open = max_connections + 1024;
    let (per_ws, per_http) = match per_address {
        Some(n) => (n, n + 64),
        None => (max_connections, open),
    };
    launch.max_connections = Some(max_connections);
    launch.max_ws_per_address = Some(per_ws);
    launch.max_http_per_address = Some(per_http);
    launch.max_http_connections = Some(open);
    launch.api_rate = UNLIMITED;
    launch.poll_interval = Some(POLL_INTERVAL);
    launch.rust_log = "warn";
    launch
}

/// The next log file of the run's work directory, numbered in start order.
fn log_path(work: &Path, name: &str) -> Result<PathBuf> {
    let n = std::fs::read_dir(work)?.count();
    Ok(work.join(format!("{n:02}-{name}.log")))
}

/// The kit's master launcher for this run: the run's binary on a free
/// loopback port. Keepalive is 600 s: idle loopback connections opened in
/// a burst get their keepalive probes in a burst, which overflows the
/// kernel's loopback backlog and makes the master drop healthy peers
/// (what the benchmark is not about).
fn master_launch(bins: &Binaries, max_connections: usize) -> MasterLaunch {
    let mut launch = MasterLaunch::new(bins.master.clone());
    launch.keepalive_secs = Some(600);
    launch.max_connections = Some(max_connections);
    launch.rust_log = "warn";
    launch
}

/// Starts `launch` with its log in the run's work directory, off the
/// runtime (the kit's launcher blocks until the master is ready).
async fn start_master_launch(bins: &Binaries, launch: MasterLaunch) -> Result<launch::Master> {
    let log = log_path(&bins.work, "master")?;
    Ok(launch::blocking("master", move || launch.start(&log)).await?)
}

/// Starts the master (its change feed off) on a free loopback port.
pub async fn start_master(bins: &Binaries, max_connections: usize) -> Result<(Proc, SocketAddr)> {
    let mut launch = master_launch(bins, max_connections);
    launch.feed = FeedListen::Off;
    let master = start_master_launch(bins, launch).await?;
    Ok((Proc(master.proc), master.addr))
}

/// Like [`start_master`], with the change feed on a free loopback port;
/// returns the master, its address and its feed's.
pub async fn start_master_with_feed(
    bins: &Binaries,
    max_connections: usize,
) -> Result<(Proc, SocketAddr, SocketAddr)> {
    let mut launch = master_launch(bins, max_connections);
    launch.feed = FeedListen::At(SocketAddr::from(([127, 0, 0, 1], 0)));
    // Every bridge of a run comes from 127.0.0.1: one address may take
    // every subscriber slot here.
    launch.feed_max_per_address = Some(master::feed::FeedConfig::DEFAULT_MAX_SUBSCRIBERS);
    let master = start_master_launch(bins, launch).await?;
    let feed = master
        .feed
        .ok_or_else(|| Error::Unexpected("the master's feed address".into()))?;
    Ok((Proc(master.proc), master.addr, feed))
}

/// Starts a bridge (see [`bridge`]) relaying to `master` on a free
/// loopback port; returns it and its HTTP address.
pub async fn start_bridge(
    bins: &Binaries,
    master: SocketAddr,
    launch: &BridgeLaunch,
) -> Result<(Proc, SocketAddr)> {
    let mut launch = launch.clone();
    launch.master = Some(master);
    let (proc_, addr, _) = launch_bridge(bins, launch).await?;
    Ok((proc_, addr))
}

/// Starts a bridge (see [`bridge`]) that runs the master in-process (no
/// `--master`; its master on a free loopback port), so registry changes
/// are pushed, not polled; returns it, its HTTP address and its master's
/// address.
pub async fn start_bridge_embedded(
    bins: &Binaries,
    launch: &BridgeLaunch,
) -> Result<(Proc, SocketAddr, SocketAddr)> {
    let mut launch = launch.clone();
    launch.master = None;
    launch_bridge(bins, launch).await
}

/// Bridges started so far in this run: each gets its own data directory.
static BRIDGES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Starts `launch` with its log in the run's work directory, off the
/// runtime; its key secret and history there too, one directory per
/// bridge unless the phase names one (never `data/` wherever the
/// benchmark was started).
async fn launch_bridge(
    bins: &Binaries,
    mut launch: BridgeLaunch,
) -> Result<(Proc, SocketAddr, SocketAddr)> {
    if launch.data_dir.is_none() {
        let n = BRIDGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        launch.data_dir = Some(bins.work.join(format!("bridge-data-{n}")));
    }
    let log = log_path(&bins.work, "bridge")?;
    let bridge = launch::blocking("bridge", move || launch.start(&log)).await?;
    Ok((Proc(bridge.proc), bridge.http, bridge.master))
}
