//! The real `master` and `bridge` binaries as child processes, and the
//! outside views of them the benchmark needs: readiness lines, resident
//! memory from `/proc`, and CPU pinning with `taskset`. Their `/metrics`
//! and plain HTTP are the test kit's (`lobby_testkit::metrics`, `http`).

pub mod nginx;
mod system;

pub use system::{
    affinity, cpu_time, load_average, pin, rss_kib, taskset_available, thread_cpu_time,
};

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use crate::error::{Error, Result};

/// The admin token the benchmark's bridges are started with.
pub const ADMIN_TOKEN: &str = "lobby-bench-admin-token-7f3a9c";

/// Where the programs under test are, and where the run keeps its files.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// The `master` executable.
    pub master: PathBuf,
    /// The `bridge` executable.
    pub bridge: PathBuf,
    /// The built front end the bridge serves (`dist/`).
    pub static_dir: PathBuf,
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
        rss_kib(self.pid())
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

/// Options of one benchmark bridge.
#[derive(Debug, Clone)]
pub struct BridgeOptions {
    /// `--poll-interval`.
    pub poll_interval: Duration,
    /// Lift the per-connection rate limit (20/s by default): the relay
    /// figures measure the relay, not the limiter.
    pub unlimited_rate: bool,
    /// `--max-connections`.
    pub max_connections: usize,
    /// `--master-feed`: follow the remote master's change feed there.
    pub master_feed: Option<SocketAddr>,
    /// `--max-ws-per-address` (and, 64 above it, `--max-http-per-address`)
    /// when the clients come from many addresses; `None`: lifted to
    /// `max_connections`, for clients all from 127.0.0.1.
    pub per_address: Option<usize>,
    /// `--data-dir` (the history phase keeps its database in the run's
    /// work directory).
    pub data_dir: Option<PathBuf>,
    /// `--history-interval`.
    pub history_interval: Option<Duration>,
    /// `--database-url`: the key secret and the history in this PostgreSQL
    /// database, shared with the other bridges given it.
    pub database_url: Option<String>,
    /// `--webhook-allow-private` (the webhooks phase's receiver is on
    /// loopback).
    pub webhook_allow_private: bool,
    /// Web Push for this many subscriptions, all from loopback: an
    /// endpoint on loopback (`--push-allow-insecure`) and the limits (in
    /// all and per address) that many.
    pub push_subscriptions: Option<usize>,
}

impl Default for BridgeOptions {
    fn default() -> Self {
        Self {
            poll_interval: Duration::from_secs(1),
            unlimited_rate: false,
            max_connections: 10_000,
            master_feed: None,
            per_address: None,
            data_dir: None,
            history_interval: None,
            database_url: None,
            webhook_allow_private: false,
            push_subscriptions: None,
        }
    }
}

/// The next log file of the run's work directory, numbered in start order.
fn log_path(work: &Path, name: &str) -> Result<PathBuf> {
    let n = std::fs::read_dir(work)?.count();
    Ok(work.join(format!("{n:02}-{name}.log")))
}

/// Starts the master on a free loopback port. Keepalive is 600 s: idle
/// loopback connections opened in a burst get their keepalive probes in a
/// burst, which overflows the kernel's loopback backlog and makes the
/// master drop healthy peers (what the benchmark is not about).
pub async fn start_master(bins: &Binaries, max_connections: usize) -> Result<(Proc, SocketAddr)> {
    let mut cmd = master_command(bins, max_connections);
    cmd.args(["--feed-listen", "off"]);
    let (proc_, line) = spawn_ready(cmd, "master", bins, "master listening on ").await?;
    let addr = parse_addr(line.trim())?;
    Ok((proc_, addr))
}

/// Like [`start_master`], with the change feed on a free loopback port;
/// returns the master, its address and its feed's.
pub async fn start_master_with_feed(
    bins: &Binaries,
    max_connections: usize,
) -> Result<(Proc, SocketAddr, SocketAddr)> {
    let mut cmd = master_command(bins, max_connections);
    // Every bridge of a run comes from 127.0.0.1: one address may take
    // every subscriber slot here.
    cmd.args(["--feed-listen", "127.0.0.1:0"]).args([
        "--feed-max-per-address",
        &master::feed::FeedConfig::DEFAULT_MAX_SUBSCRIBERS.to_string(),
    ]);
    let (proc_, lines) = spawn_ready_lines(
        cmd,
        "master",
        bins,
        &["master listening on ", "master feed listening on "],
    )
    .await?;
    let (Some(addr), Some(feed)) = (lines.first(), lines.get(1)) else {
        return Err(Error::Unexpected("the master's readiness lines".into()));
    };
    Ok((proc_, parse_addr(addr.trim())?, parse_addr(feed.trim())?))
}

fn master_command(bins: &Binaries, max_connections: usize) -> Command {
    let mut cmd = Command::new(&bins.master);
    // The load generator plays thousands of game servers from 127.0.0.1.
    cmd.args(["--listen", "127.0.0.1:0", "--keepalive-secs", "600"])
        .args(["--max-connections", &max_connections.to_string()])
        .args(["--exempt", "127.0.0.1"])
        .env("RUST_LOG", "warn");
    cmd
}

/// Starts a bridge relaying to `master` on a free loopback port; returns it
/// and its HTTP address.
pub async fn start_bridge(
    bins: &Binaries,
    master: SocketAddr,
    opts: &BridgeOptions,
) -> Result<(Proc, SocketAddr)> {
    let (proc_, addr, _) = launch_bridge(bins, Some(master), opts).await?;
    Ok((proc_, addr))
}

/// Starts a bridge that runs the master in-process (no `--master`; its
/// master on a free loopback port), so registry changes are pushed, not
/// polled; returns it, its HTTP address and its master's address.
pub async fn start_bridge_embedded(
    bins: &Binaries,
    opts: &BridgeOptions,
) -> Result<(Proc, SocketAddr, SocketAddr)> {
    launch_bridge(bins, None, opts).await
}

/// Bridges started so far in this run: each gets its own data directory.
static BRIDGES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The bridge with `opts`, relaying to `master` or embedding one.
async fn launch_bridge(
    bins: &Binaries,
    master: Option<SocketAddr>,
    opts: &BridgeOptions,
) -> Result<(Proc, SocketAddr, SocketAddr)> {
    let token = bins.work.join("admin-token");
    std::fs::write(&token, format!("{ADMIN_TOKEN}\n"))?;
    let mut cmd = Command::new(&bins.bridge);
    cmd.args(["--listen", "127.0.0.1:0"]);
    match master {
        Some(master) => cmd.args(["--master", &master.to_string()]),
        None => cmd.args(["--embedded-master", "127.0.0.1:0"]),
    };
    // Every load-generating client comes from 127.0.0.1: lift the
    // per-address caps to the connection count, and its budget of list
    // answers (each viewer's first list, /api/servers) out of reach.
    let open = (opts.max_connections + 1024).to_string();
    let (per_ws, per_http) = match opts.per_address {
        Some(n) => (n.to_string(), (n + 64).to_string()),
        None => (opts.max_connections.to_string(), open.clone()),
    };
    cmd.arg("--static")
        .arg(&bins.static_dir)
        .arg("--admin-token-file")
        .arg(&token)
        .args([
            "--poll-interval",
            &opts.poll_interval.as_millis().to_string(),
        ])
        .args(["--max-connections", &opts.max_connections.to_string()])
        .args(["--max-ws-per-address", &per_ws])
        .args(["--max-http-per-address", &per_http])
        .args(["--max-http-connections", &open])
        .args(["--api-rate", "1000000000", "--api-burst", "1000000000"])
        // Its key secret and history in the run's work directory, one per
        // bridge unless the phase names one (never `data/` wherever the
        // benchmark was started).
        .arg("--data-dir")
        .arg(opts.data_dir.clone().unwrap_or_else(|| {
            bins.work.join(format!(
                "bridge-data-{}",
                BRIDGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ))
        }))
        .env("RUST_LOG", "warn");
    if opts.unlimited_rate {
        cmd.args(["--rate-limit", "1000000000", "--rate-burst", "1000000000"]);
    }
    if let Some(feed) = opts.master_feed {
        cmd.args(["--master-feed", &feed.to_string()]);
    } else if master.is_some() {
        // Polled on purpose: without it the bridge would look for a feed
        // at the master's host, port 51964 (another run's, perhaps).
        cmd.args(["--master-feed", "off"]);
    }
    if opts.webhook_allow_private {
        cmd.arg("--webhook-allow-private");
    }
    if let Some(n) = opts.push_subscriptions {
        let n = n.max(1).to_string();
        cmd.arg("--push-allow-insecure").args([
            "--push-contact",
            "mailto:bench@lobby.example",
            "--push-max-subscriptions",
            &n,
            "--push-max-per-address",
            &n,
        ]);
    }
    if let Some(every) = opts.history_interval {
        cmd.args(["--history-interval", &format!("{}s", every.as_secs())]);
    }
    if let Some(url) = &opts.database_url {
        cmd.args(["--database-url", url]);
    }
    let (proc_, line) = spawn_ready(cmd, "bridge", bins, "bridge listening on http://").await?;
    // "http://ADDR master MASTER"
    let words: Vec<&str> = line.split_whitespace().collect();
    let (Some(addr), Some(master)) = (words.first(), words.get(2)) else {
        return Err(Error::Unexpected(format!("bridge readiness line {line:?}")));
    };
    Ok((proc_, parse_addr(addr)?, parse_addr(master)?))
}

fn parse_addr(s: &str) -> Result<SocketAddr> {
    s.parse()
        .map_err(|_| Error::Unexpected(format!("not an address: {s:?}")))
}

/// Spawns `cmd` with stderr to a log file and waits for the stdout line
/// starting with `prefix`; returns the rest of that line.
async fn spawn_ready(
    cmd: Command,
    name: &'static str,
    bins: &Binaries,
    prefix: &str,
) -> Result<(Proc, String)> {
    let (proc_, mut lines) = spawn_ready_lines(cmd, name, bins, &[prefix]).await?;
    Ok((proc_, lines.pop().unwrap_or_default()))
}

/// Like [`spawn_ready`], waiting for one line per prefix: the test kit's
/// launcher, on a blocking thread (it waits by blocking), so the run's
/// other tasks go on meanwhile.
async fn spawn_ready_lines(
    cmd: Command,
    name: &'static str,
    bins: &Binaries,
    prefixes: &[&str],
) -> Result<(Proc, Vec<String>)> {
    let log = log_path(&bins.work, name)?;
    let prefixes: Vec<String> = prefixes.iter().map(|p| (*p).to_owned()).collect();
    let (proc_, lines) = tokio::task::spawn_blocking(move || {
        let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
        lobby_testkit::process::Proc::try_spawn_ready_all(name, cmd, &log, &prefixes)
    })
    .await
    .map_err(|e| Error::Unexpected(format!("starting {name}: {e}")))??;
    Ok((Proc(proc_), lines))
}
