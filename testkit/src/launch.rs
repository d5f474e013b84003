//! How the product's binaries are started: the `master` and `bridge`
//! command lines, their environment, and the ready lines they print. The
//! one launcher of both: the tests' [`crate::product::Product`] and the
//! benchmarks (`bench/`) start every master and bridge through it, each
//! with the options it needs (the tests' debug binaries and extra flags,
//! the benchmarks' release binaries, limits sized for a crowd, a shared
//! database).
//!
//! Starting blocks until the process is ready (its ready lines, bounded
//! by [`crate::HUNG`]); async callers run it with [`blocking`].

use std::{
    ffi::OsString,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use crate::process::Proc;

/// Every address this launcher listens on or exempts: loopback, where
/// the tests and the benchmarks play every client and game server.
const LOOPBACK: &str = "127.0.0.1";

/// Where a master's change feed listens (`--feed-listen`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeedListen {
    /// No `--feed-listen`: the master's default address (off if taken).
    #[default]
    Default,
    /// `--feed-listen off`.
    Off,
    /// `--feed-listen ADDR` (port 0: a free port, reported by
    /// [`Master::feed`]).
    At(SocketAddr),
}

/// One `master` process to start. [`MasterLaunch::new`] gives the
/// defaults; set the fields that differ.
#[derive(Debug, Clone)]
pub struct MasterLaunch {
    /// The executable: the tests' [`crate::paths::binary`]`("master")`,
    /// or a benchmark's release build.
    pub binary: PathBuf,
    /// `--listen` (default `127.0.0.1:0`).
    pub listen: SocketAddr,
    /// `--feed-listen`.
    pub feed: FeedListen,
    /// `--feed-max-per-address`.
    pub feed_max_per_address: Option<usize>,
    /// `--max-connections`.
    pub max_connections: Option<usize>,
    /// `--keepalive-secs`.
    pub keepalive_secs: Option<u64>,
    /// `--exempt 127.0.0.1` (default): game servers from loopback exempt
    /// from the per-address limits. Off for a master started as the
    /// deployment starts it.
    pub exempt_loopback: bool,
    /// `RUST_LOG` (default `info`).
    pub rust_log: &'static str,
    /// More environment variables, set before `RUST_LOG`.
    pub env: Vec<(OsString, OsString)>,
    /// More arguments, after all of the above.
    pub args: Vec<OsString>,
}

/// A master started by [`MasterLaunch::start`].
#[derive(Debug)]
pub struct Master {
    /// The process (killed on drop).
    pub proc: Proc,
    /// Where game servers register.
    pub addr: SocketAddr,
    /// Where its change feed listens, when given an address
    /// ([`FeedListen::At`]).
    pub feed: Option<SocketAddr>,
}

impl MasterLaunch {
    /// `binary` on a free loopback port, game servers from loopback
    /// exempt from the per-address limits.
    pub fn new(binary: PathBuf) -> MasterLaunch {
        MasterLaunch {
            binary,
            listen: any_port(),
            feed: FeedListen::Default,
            feed_max_per_address: None,
            max_connections: None,
            keepalive_secs: None,
            exempt_loopback: true,
            rust_log: "info",
            env: Vec::new(),
            args: Vec::new(),
        }
    }

    /// The command line and environment.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)))
            .arg("--listen")
            .arg(self.listen.to_string())
            .env("RUST_LOG", self.rust_log);
        // The tests and the benchmarks play every game server from
        // loopback.
        if self.exempt_loopback {
            cmd.args(["--exempt", LOOPBACK]);
        }
        match self.feed {
            FeedListen::Default => {}
            FeedListen::Off => {
                cmd.args(["--feed-listen", "off"]);
            }
            FeedListen::At(at) => {
                cmd.arg("--feed-listen").arg(at.to_string());
            }
        }
        if let Some(n) = self.feed_max_per_address {
            cmd.arg("--feed-max-per-address").arg(n.to_string());
        }
        if let Some(n) = self.max_connections {
            cmd.arg("--max-connections").arg(n.to_string());
        }
        if let Some(secs) = self.keepalive_secs {
            cmd.arg("--keepalive-secs").arg(secs.to_string());
        }
        cmd.args(&self.args);
        cmd
    }

    /// Starts it, its stdout and stderr appended to `log`, and waits for
    /// its ready lines (the feed's too when it listens at an address);
    /// says why not (with its log) if it exits first or hangs.
    pub fn start(&self, log: &Path) -> crate::Result<Master> {
        const READY: &str = "master listening on ";
        const FEED_READY: &str = "master feed listening on ";
        let feed = matches!(self.feed, FeedListen::At(_));
        let ready: &[&str] = if feed { &[READY, FEED_READY] } else { &[READY] };
        let (proc, lines) = Proc::try_spawn_ready_all("master", self.command(), log, ready)?;
        let addr = parse_addr("master", &lines[0])?;
        let feed = match lines.get(1) {
            Some(line) => Some(parse_addr("master feed", line)?),
            None => None,
        };
        Ok(Master { proc, addr, feed })
    }
}

/// Which change feed a bridge with `--master` follows (`--master-feed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MasterFeed {
    /// `--master-feed off`: polled on purpose (by default the bridge
    /// would look for a feed at the master's host, port 51964, where
    /// another test's or run's master may listen).
    #[default]
    Off,
    /// `--master-feed ADDR`.
    At(SocketAddr),
    /// No `--master-feed`: the bridge's default, the master's host at
    /// port 51964 (for the test of that default).
    Default,
}

/// Where a bridge's admin token comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdminToken {
    /// `--admin-token-file` (see [`write_admin_token`]).
    File(PathBuf),
    /// `BRIDGE_ADMIN_TOKEN` in its environment.
    Env(String),
    /// Neither (`BRIDGE_ADMIN_TOKEN` removed): the bridge generates one
    /// and shows its sign-in link (`admin page: `, see
    /// [`BridgeLaunch::start_ready`]).
    Generated,
}

/// One `bridge` process to start. [`BridgeLaunch::new`] gives the
/// defaults; set the fields that differ. Every `Option` left `None` is
/// the bridge's own default (the flag is not given).
#[derive(Debug, Clone)]
pub struct BridgeLaunch {
    /// The executable: the tests' [`crate::paths::binary`]`("bridge")`,
    /// or a benchmark's release build.
    pub binary: PathBuf,
    /// `--listen` (default `127.0.0.1:0`).
    pub listen: SocketAddr,
    /// `--master`: relay to this master; `None`: run one in-process
    /// (`--embedded-master`, at [`BridgeLaunch::embedded_master`]).
    pub master: Option<SocketAddr>,
    /// Where the embedded master listens (default `127.0.0.1:0`).
    pub embedded_master: SocketAddr,
    /// `--master-feed`: with [`BridgeLaunch::master`], which change feed
    /// it follows.
    pub master_feed: MasterFeed,
    /// `--static`: the built front end (`None`: the bridge's default).
    pub static_dir: Option<PathBuf>,
    /// The admin token.
    pub admin_token: AdminToken,
    /// `--data-dir`: its key secret and history. Left `None`, the bridge
    /// keeps them in `data/` wherever it was started: a test or benchmark
    /// names a scratch folder.
    pub data_dir: Option<PathBuf>,
    /// `--api-rate` and `--api-burst`: one address's budget of whole
    /// lists. Every client of a test or benchmark comes from loopback, so
    /// both lift it.
    pub api_rate: Option<u64>,
    /// `--rate-limit` and `--rate-burst`: messages per connection.
    pub rate_limit: Option<u64>,
    /// `--poll-interval`, in milliseconds.
    pub poll_interval: Option<Duration>,
    /// `--max-connections`.
    pub max_connections: Option<usize>,
    /// `--max-ws-per-address`.
    pub max_ws_per_address: Option<usize>,
    /// `--max-http-per-address`.
    pub max_http_per_address: Option<usize>,
    /// `--max-http-connections`.
    pub max_http_connections: Option<usize>,
    /// `--history-interval`, in whole seconds.
    pub history_interval: Option<Duration>,
    /// `--database-url`: key secret, history and notifications in this
    /// PostgreSQL database, shared with the other bridges given it.
    pub database_url: Option<String>,
    /// `--webhook-allow-private` (a receiver on loopback).
    pub webhook_allow_private: bool,
    /// Web Push to push services on loopback (`--push-allow-insecure`,
    /// a contact) for this many subscriptions, in all and per address.
    pub push_subscriptions: Option<usize>,
    /// `RUST_LOG` (default `info`).
    pub rust_log: &'static str,
    /// More environment variables (an `EnvironmentFile`'s, `BRIDGE_*`
    /// settings), set before `RUST_LOG`.
    pub env: Vec<(OsString, OsString)>,
    /// More arguments, after all of the above.
    pub args: Vec<OsString>,
}

/// A bridge started by [`BridgeLaunch::start`].
#[derive(Debug)]
pub struct Bridge {
    /// The process (killed on drop).
    pub proc: Proc,
    /// Its HTTP address (the page, `/ws`, `/metrics`).
    pub http: SocketAddr,
    /// Its master's address (the embedded one's, or the one it relays to).
    pub master: SocketAddr,
}

impl BridgeLaunch {
    /// `binary` on a free loopback port with its embedded master, serving
    /// `static_dir`, the admin token in `admin_token_file`; the list
    /// budget lifted for loopback.
    pub fn new(binary: PathBuf, static_dir: PathBuf, admin_token_file: PathBuf) -> BridgeLaunch {
        BridgeLaunch {
            static_dir: Some(static_dir),
            admin_token: AdminToken::File(admin_token_file),
            api_rate: Some(1_000_000),
            ..BridgeLaunch::plain(binary)
        }
    }

    /// `binary` on a free loopback port with its embedded master, and
    /// otherwise the bridge's own defaults (no `--static`, a generated
    /// admin token, its list budget): for a test of the binary itself.
    pub fn plain(binary: PathBuf) -> BridgeLaunch {
        BridgeLaunch {
            binary,
            listen: any_port(),
            master: None,
            embedded_master: any_port(),
            master_feed: MasterFeed::Off,
            static_dir: None,
            admin_token: AdminToken::Generated,
            data_dir: None,
            api_rate: None,
            rate_limit: None,
            poll_interval: None,
            max_connections: None,
            max_ws_per_address: None,
            max_http_per_address: None,
            max_http_connections: None,
            history_interval: None,
            database_url: None,
            webhook_allow_private: false,
            push_subscriptions: None,
            rust_log: "info",
            env: Vec::new(),
            args: Vec::new(),
        }
    }

    /// The command line and environment.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)))
            .arg("--listen")
            .arg(self.listen.to_string())
            .env("RUST_LOG", self.rust_log);
        if let Some(dir) = &self.static_dir {
            cmd.arg("--static").arg(dir);
        }
        match &self.admin_token {
            AdminToken::File(file) => {
                cmd.arg("--admin-token-file").arg(file);
            }
            AdminToken::Env(token) => {
                cmd.env("BRIDGE_ADMIN_TOKEN", token);
            }
            AdminToken::Generated => {
                cmd.env_remove("BRIDGE_ADMIN_TOKEN");
            }
        }
        if let Some(dir) = &self.data_dir {
            cmd.arg("--data-dir").arg(dir);
        }
        match self.master {
            Some(master) => {
                cmd.arg("--master").arg(master.to_string());
                match self.master_feed {
                    MasterFeed::At(feed) => {
                        cmd.arg("--master-feed").arg(feed.to_string());
                    }
                    MasterFeed::Off => {
                        cmd.args(["--master-feed", "off"]);
                    }
                    MasterFeed::Default => {}
                }
            }
            None => {
                cmd.arg("--embedded-master")
                    .arg(self.embedded_master.to_string());
            }
        }
        let pairs = [
            ("--api-rate", "--api-burst", self.api_rate),
            ("--rate-limit", "--rate-burst", self.rate_limit),
        ];
        for (rate, burst, n) in pairs {
            if let Some(n) = n {
                cmd.arg(rate)
                    .arg(n.to_string())
                    .arg(burst)
                    .arg(n.to_string());
            }
        }
        if let Some(every) = self.poll_interval {
            cmd.arg("--poll-interval")
                .arg(every.as_millis().to_string());
        }
        let counts = [
            ("--max-connections", self.max_connections),
            ("--max-ws-per-address", self.max_ws_per_address),
            ("--max-http-per-address", self.max_http_per_address),
            ("--max-http-connections", self.max_http_connections),
        ];
        for (flag, n) in counts {
            if let Some(n) = n {
                cmd.arg(flag).arg(n.to_string());
            }
        }
        if let Some(every) = self.history_interval {
            cmd.arg("--history-interval")
                .arg(format!("{}s", every.as_secs()));
        }
        if let Some(url) = &self.database_url {
            cmd.arg("--database-url").arg(url);
        }
        if self.webhook_allow_private {
            cmd.arg("--webhook-allow-private");
        }
        if let Some(n) = self.push_subscriptions {
            let n = n.max(1).to_string();
            cmd.arg("--push-allow-insecure")
                .args(["--push-contact", "mailto:bench@lobby.example"])
                .args(["--push-max-subscriptions", &n])
                .args(["--push-max-per-address", &n]);
        }
        cmd.args(&self.args);
        cmd
    }

    /// Starts it, its stdout and stderr appended to `log`, and waits for
    /// its ready line; says why not (with its log) if it exits first or
    /// hangs.
    pub fn start(&self, log: &Path) -> crate::Result<Bridge> {
        self.start_ready(log, &[]).map(|(bridge, _)| bridge)
    }

    /// [`BridgeLaunch::start`] that also waits for a stdout line starting
    /// with each of `more` (the `admin page: ` of a generated token) and
    /// returns the rest of each, in the order of `more`.
    pub fn start_ready(&self, log: &Path, more: &[&str]) -> crate::Result<(Bridge, Vec<String>)> {
        let mut ready = vec![BRIDGE_READY];
        ready.extend_from_slice(more);
        let (proc, mut lines) = Proc::try_spawn_ready_all("bridge", self.command(), log, &ready)?;
        let (http, master) = bridge_addrs(&lines.remove(0))?;
        Ok((Bridge { proc, http, master }, lines))
    }
}

/// The start of the line a bridge prints on stdout once it serves:
/// `bridge listening on http://ADDR master ADDR`.
pub const BRIDGE_READY: &str = "bridge listening on ";

/// The HTTP and master addresses in a bridge's ready line (all of it, or
/// what follows [`BRIDGE_READY`]), for a test that reads the process's
/// stdout itself.
pub fn bridge_addrs(line: &str) -> crate::Result<(SocketAddr, SocketAddr)> {
    let rest = line.trim().strip_prefix(BRIDGE_READY).unwrap_or(line);
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words[..] {
        [url, "master", master, ..] => Ok((
            parse_addr("bridge", url.trim_start_matches("http://"))?,
            parse_addr("bridge's master", master)?,
        )),
        _ => Err(crate::Error::Unexpected(format!(
            "unexpected ready line from the bridge: {line:?}"
        ))),
    }
}

/// The admin token the tests sign in with.
pub const ADMIN_TOKEN: &str = "e2e-admin-token-0123456789abcdef";

/// Writes the admin token file ([`ADMIN_TOKEN`]) a bridge
/// of a test or benchmark is given into `dir`; its path.
pub fn write_admin_token(dir: &Path) -> crate::Result<PathBuf> {
    let path = dir.join("admin-token");
    std::fs::write(&path, format!("{}\n", ADMIN_TOKEN))?;
    Ok(path)
}

/// Runs `start` (a launcher's blocking start, or nginx's) on a blocking
/// thread, so an async caller's other tasks go on meanwhile.
pub async fn blocking<T: Send + 'static>(
    what: &str,
    start: impl FnOnce() -> crate::Result<T> + Send + 'static,
) -> crate::Result<T> {
    tokio::task::spawn_blocking(start)
        .await
        .map_err(|e| crate::Error::Unexpected(format!("starting {what}: {e}")))?
}

/// `127.0.0.1:0`: a free loopback port, picked by the process.
pub(crate) fn any_port() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

fn parse_addr(what: &str, s: &str) -> crate::Result<SocketAddr> {
    s.trim()
        .parse()
        .map_err(|_| crate::Error::Unexpected(format!("{what}: not an address: {s:?}")))
}
