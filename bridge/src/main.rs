//! `bridge`: serves the front end and relays browsers to the master, which
//! it runs in-process unless `--master` names one; until SIGINT or SIGTERM.

use std::{fmt, io::Write, net::SocketAddr, path::PathBuf, str::FromStr, time::Duration};

use anyhow::Context;
use bridge::{forwarded::ForwardedHeader, AdminToken, Bridge, Config};
use clap::Parser;
use ipnet::IpNet;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The lobby's WebSocket bridge: serves the web front end and relays
/// browsers to the master server (see the README).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address for HTTP and WebSocket (`/ws`).
    #[arg(long, env = "BRIDGE_LISTEN", default_value_t = Config::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Directory of the built front end.
    #[arg(long = "static", env = "BRIDGE_STATIC", default_value = Config::DEFAULT_STATIC_DIR)]
    static_dir: PathBuf,
    /// Relay to this running master (host:port) instead of starting one.
    #[arg(long, env = "BRIDGE_MASTER")]
    master: Option<String>,
    /// Where the in-process master listens when --master is not given.
    #[arg(
        long,
        env = "BRIDGE_EMBEDDED_MASTER",
        default_value_t = master::Config::DEFAULT_LISTEN
    )]
    embedded_master: SocketAddr,
    /// File whose first line is the admin token (else BRIDGE_ADMIN_TOKEN,
    /// else a random one printed at start).
    #[arg(long, env = "BRIDGE_ADMIN_TOKEN_FILE")]
    admin_token_file: Option<PathBuf>,
    /// Origin allowed to open /ws (repeatable). Default: the page's own
    /// origin, plus http://localhost:* and http://127.0.0.1:* on loopback.
    #[arg(long, env = "BRIDGE_ALLOWED_ORIGINS", value_delimiter = ',')]
    allowed_origin: Vec<String>,
    /// WebSocket connections served at once; more get HTTP 503.
    #[arg(long, env = "BRIDGE_MAX_CONNECTIONS", default_value_t = Config::DEFAULT_MAX_CONNECTIONS, value_parser = count)]
    max_connections: usize,
    /// Client TCP connections at once, WebSockets included; more are closed
    /// at once. Default: 16384, or half the open-file limit when smaller.
    #[arg(long, env = "BRIDGE_MAX_HTTP_CONNECTIONS", value_parser = count)]
    max_http_connections: Option<usize>,
    /// Client TCP connections from one address (IPv6: one /64), WebSockets
    /// included; trusted proxies are exempt.
    #[arg(long, env = "BRIDGE_MAX_HTTP_PER_ADDRESS", default_value_t = Config::DEFAULT_MAX_HTTP_PER_ADDRESS, value_parser = count)]
    max_http_per_address: usize,
    /// WebSockets from one client address (IPv6: one /64); more get HTTP 503.
    #[arg(long, env = "BRIDGE_MAX_WS_PER_ADDRESS", default_value_t = Config::DEFAULT_MAX_WS_PER_ADDRESS, value_parser = count)]
    max_ws_per_address: usize,
    /// Time a client has to send a request's whole head.
    #[arg(long, env = "BRIDGE_HEADER_READ_TIMEOUT", default_value_t = Interval(Config::DEFAULT_HEADER_READ_TIMEOUT))]
    header_read_timeout: Interval,
    /// Close an HTTP connection that sent no request for this long.
    #[arg(long, env = "BRIDGE_IDLE_TIMEOUT", default_value_t = Interval(Config::DEFAULT_IDLE_TIMEOUT))]
    idle_timeout: Interval,
    /// Reverse proxy (address or CIDR; repeatable) whose forwarding header
    /// names the client. From anyone else the socket's peer is the client.
    #[arg(
        long = "trusted-proxy",
        env = "BRIDGE_TRUSTED_PROXIES",
        value_delimiter = ',',
        value_name = "CIDR",
        value_parser = cidr
    )]
    trusted_proxy: Vec<IpNet>,
    /// The header the trusted proxies fill in: x-forwarded-for or forwarded.
    #[arg(
        long,
        env = "BRIDGE_FORWARDED_HEADER",
        default_value = "x-forwarded-for"
    )]
    forwarded_header: ForwardedHeader,
    /// How often the shared upstream asks the master for the list
    /// (humantime like "1s", "500ms", or plain milliseconds).
    #[arg(long, env = "BRIDGE_POLL_INTERVAL", default_value_t = Interval(Config::DEFAULT_POLL_INTERVAL))]
    poll_interval: Interval,
    /// Messages per second one connection may send.
    #[arg(long, env = "BRIDGE_RATE_LIMIT", default_value_t = Config::DEFAULT_RATE_PER_SEC)]
    rate_limit: u32,
    /// Messages one connection may send in a burst.
    #[arg(long, env = "BRIDGE_RATE_BURST", default_value_t = Config::DEFAULT_RATE_BURST)]
    rate_burst: u32,
    /// Hide servers' addresses and ports from viewers (admins still see them).
    #[arg(long, env = "BRIDGE_HIDE_ADDRESSES")]
    hide_addresses: bool,
    /// How often to ping each browser.
    #[arg(long, env = "BRIDGE_PING_INTERVAL", default_value_t = Interval(Config::DEFAULT_PING_INTERVAL))]
    ping_interval: Interval,
    /// Close a browser that answered nothing for this long.
    #[arg(long, env = "BRIDGE_PONG_TIMEOUT", default_value_t = Interval(Config::DEFAULT_PONG_TIMEOUT))]
    pong_timeout: Interval,
    /// Show this Valve A2S game server (host:port; repeatable). Off unless given.
    #[arg(
        long = "a2s",
        env = "BRIDGE_A2S",
        value_delimiter = ',',
        value_name = "HOST:PORT"
    )]
    a2s: Vec<String>,
    /// Show the servers this Serious Engine GameAgent master lists
    /// (host:port, UDP; repeatable). Off unless given.
    #[arg(
        long = "gameagent-master",
        env = "BRIDGE_GAMEAGENT_MASTER",
        value_delimiter = ',',
        value_name = "HOST:PORT"
    )]
    gameagent_master: Vec<String>,
    /// How often the A2S and GameAgent servers are queried again.
    #[arg(
        long,
        env = "BRIDGE_GAME_POLL_INTERVAL",
        default_value_t = Interval(Config::DEFAULT_GAME_POLL_INTERVAL)
    )]
    game_poll_interval: Interval,
    /// Time limit of one UDP query attempt.
    #[arg(
        long,
        env = "BRIDGE_GAME_QUERY_TIMEOUT",
        default_value_t = Interval(Config::DEFAULT_GAME_QUERY_TIMEOUT)
    )]
    game_query_timeout: Interval,
    /// Attempts after a UDP query's first one fails.
    #[arg(long, env = "BRIDGE_GAME_QUERY_RETRIES", default_value_t = Config::DEFAULT_GAME_QUERY_RETRIES)]
    game_query_retries: u32,
    /// UDP queries in flight at once.
    #[arg(
        long,
        env = "BRIDGE_GAME_QUERY_CONCURRENCY",
        default_value_t = Config::DEFAULT_GAME_QUERY_CONCURRENCY,
        value_parser = count
    )]
    game_query_concurrency: usize,
    /// Also query loopback, private, link-local and other non-global
    /// addresses a GameAgent master lists (a LAN master). Off: skipped.
    #[arg(long, env = "BRIDGE_GAME_ALLOW_PRIVATE")]
    game_allow_private: bool,
    /// Servers taken from one GameAgent master's list at most (after
    /// dropping duplicates and skipped addresses).
    #[arg(long, env = "BRIDGE_GAME_MAX_SERVERS", default_value_t = Config::DEFAULT_GAME_MAX_SERVERS, value_parser = count)]
    game_max_servers: usize,
    /// Longest time one refresh of the game servers takes; servers that
    /// have not answered by then are shown offline ("no answer in time").
    #[arg(long, env = "BRIDGE_GAME_REFRESH_DEADLINE", default_value_t = Interval(Config::DEFAULT_GAME_REFRESH_DEADLINE))]
    game_refresh_deadline: Interval,
    /// Failed bridgeAuth one client address (IPv6: one /64) may make per
    /// --auth-window; then `rate-limited` without checking the token.
    #[arg(long, env = "BRIDGE_AUTH_FAILURES", default_value_t = Config::DEFAULT_AUTH_MAX_FAILURES, value_parser = count_u32)]
    auth_failures: u32,
    /// The window of --auth-failures, from an address's first failure.
    #[arg(long, env = "BRIDGE_AUTH_WINDOW", default_value_t = Interval(Config::DEFAULT_AUTH_WINDOW))]
    auth_window: Interval,
    /// Shortest time between two list answers to one browser's queries;
    /// queries within it are answered once, at its end.
    #[arg(long, env = "BRIDGE_QUERY_INTERVAL", default_value_t = Interval(Config::DEFAULT_QUERY_INTERVAL))]
    query_interval: Interval,
}

/// A duration on the command line: "1s", "250ms", "2m" or plain
/// milliseconds; shown like "1s" (so `--help` prints the config's default).
#[derive(Debug, Clone, Copy)]
struct Interval(Duration);

impl FromStr for Interval {
    type Err = String;

    /// Zero is refused: a zero interval would spin or panic a task.
    fn from_str(s: &str) -> Result<Self, String> {
        let d = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            s.parse()
                .map(Duration::from_millis)
                .map_err(|e: std::num::ParseIntError| e.to_string())?
        } else {
            humantime::parse_duration(s).map_err(|e| e.to_string())?
        };
        if d.is_zero() {
            return Err("must be greater than zero".into());
        }
        Ok(Self(d))
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        humantime::format_duration(self.0).fmt(f)
    }
}

impl Args {
    /// `base` (the master and the token) with these arguments applied.
    fn config(self, base: Config, loopback: bool, open_files: Option<u64>) -> Config {
        Config {
            static_dir: self.static_dir,
            allowed_origins: self.allowed_origin,
            loopback_origins: loopback,
            max_connections: self.max_connections,
            poll_interval: self.poll_interval.0,
            rate_per_sec: self.rate_limit,
            rate_burst: self.rate_burst,
            flood_close_after: self.rate_burst.max(1),
            hide_addresses: self.hide_addresses,
            ping_interval: self.ping_interval.0,
            pong_timeout: self.pong_timeout.0,
            a2s: self.a2s,
            gameagent_masters: self.gameagent_master,
            game_poll_interval: self.game_poll_interval.0,
            game_query_timeout: self.game_query_timeout.0,
            game_query_retries: self.game_query_retries,
            game_query_concurrency: self.game_query_concurrency,
            max_http_connections: http_cap(self.max_http_connections, open_files),
            max_http_per_address: self.max_http_per_address,
            max_ws_per_address: self.max_ws_per_address,
            header_read_timeout: self.header_read_timeout.0,
            idle_timeout: self.idle_timeout.0,
            trusted_proxies: self.trusted_proxy,
            forwarded_header: self.forwarded_header,
            game_allow_private: self.game_allow_private,
            game_max_servers: self.game_max_servers,
            game_refresh_deadline: self.game_refresh_deadline.0,
            auth_max_failures: self.auth_failures,
            auth_window: self.auth_window.0,
            query_interval: self.query_interval.0,
            ..base
        }
    }
}

/// A count above zero: a cap of zero would refuse everyone.
fn count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>().map_err(|e| e.to_string())? {
        0 => Err("must be greater than zero".into()),
        n => Ok(n),
    }
}

/// A count above zero that fits a `u32`.
fn count_u32(s: &str) -> Result<u32, String> {
    u32::try_from(count(s)?).map_err(|e| e.to_string())
}

/// A network (`10.0.0.0/8`, `2001:db8::/32`) or one address.
fn cidr(s: &str) -> Result<IpNet, String> {
    s.parse::<IpNet>()
        .or_else(|_| s.parse::<std::net::IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{s:?} is neither an address nor a CIDR network"))
}

/// The HTTP connection cap: as asked, else the default; within the
/// open-file limit either way, since client sockets may use half of it (the
/// rest is for the master's connections and files).
fn http_cap(asked: Option<usize>, open_files: Option<u64>) -> usize {
    let wanted = asked.unwrap_or(bridge::config::DEFAULT_MAX_HTTP_CONNECTIONS);
    let Some(limit) = open_files else {
        return wanted;
    };
    let limit_usize = usize::try_from(limit).unwrap_or(usize::MAX);
    // By default half the descriptors (the rest: admins' master
    // connections, the embedded master's game servers, files); an operator
    // who asks for more gets it up to the limit less a small reserve.
    let fits = if asked.is_some() {
        limit_usize.saturating_sub(RESERVED_FDS).max(1)
    } else {
        (limit_usize / 2).max(1)
    };
    if wanted <= fits {
        return wanted;
    }
    if asked.is_some() {
        tracing::warn!(
            asked = wanted,
            open_file_limit = limit,
            using = fits,
            "lowering --max-http-connections to what the open-file limit allows"
        );
    } else {
        tracing::info!(
            open_file_limit = limit,
            max_http_connections = fits,
            "HTTP connections capped at half the open-file limit"
        );
    }
    fits
}

/// Descriptors kept back from an operator's `--max-http-connections`.
const RESERVED_FDS: usize = 256;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    master::logging::init();
    let args = Args::parse();
    // Every connection is a file descriptor: use all the hard limit allows.
    let open_files = master::fdlimit::raise_to_hard_limit();

    let (token, generated) = if let Some(path) = &args.admin_token_file {
        (
            AdminToken::from_file(path)
                .with_context(|| format!("the token in {} is refused", path.display()))?,
            false,
        )
    } else if let Ok(token) = std::env::var("BRIDGE_ADMIN_TOKEN") {
        (
            AdminToken::new(&token).context("BRIDGE_ADMIN_TOKEN is refused")?,
            false,
        )
    } else {
        (AdminToken::generate()?, true)
    };

    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let shutdown = CancellationToken::new();

    let (master_addr, embedded) = match &args.master {
        Some(master) => {
            tracing::info!(%master, "relaying to an existing master");
            (master.clone(), None)
        }
        None => {
            let master_listener =
                TcpListener::bind(args.embedded_master)
                    .await
                    .with_context(|| {
                        format!(
                            "cannot start the embedded master on {0}; is a master already \
                         running there? Use it with `--master {0}`, or pick another \
                         address with `--embedded-master`",
                            args.embedded_master
                        )
                    })?;
            let master_addr = master_listener.local_addr()?;
            tracing::info!(addr = %master_addr, "starting the embedded master");
            // The bridge's own connections (its poller, one per admin) come
            // from the address it dials: exempt from the per-address cap.
            let master = master::Master::new(master::Config::embedded(master_addr));
            let registry = master.registry();
            let stop = shutdown.clone();
            let task = tokio::spawn(async move {
                master.run(master_listener, stop.cancelled_owned()).await;
            });
            (master_addr.to_string(), Some((task, registry)))
        }
    };

    let config = args.config(
        Config::new(master_addr.clone(), token.clone()),
        addr.ip().is_loopback(),
        open_files,
    );
    config.validate()?;

    tracing::info!(%addr, master = %master_addr, "bridge listening");
    if generated {
        eprintln!(
            "admin token (generated for this run; set BRIDGE_ADMIN_TOKEN or \
             --admin-token-file to keep one): {}\nadmin page: http://{addr}/admin#token={}",
            token.expose(),
            token.expose()
        );
    }
    // The one line on stdout: scripts and tests wait for it.
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "bridge listening on http://{addr} master {master_addr}"
    )?;
    stdout.flush()?;
    drop(stdout);

    let stop = shutdown.clone();
    tokio::spawn(async move {
        master::signal::shutdown_signal().await;
        stop.cancel();
    });
    // With the master in this process, its changes are pushed as they
    // happen; a remote master is polled.
    let (bridge, embedded) = match embedded {
        Some((task, registry)) => (Bridge::embedding(config, registry), Some(task)),
        None => (Bridge::new(config), None),
    };
    let result = bridge
        .run(listener, shutdown.clone().cancelled_owned())
        .await;
    shutdown.cancel();
    if let Some(task) = embedded {
        let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
    }
    result?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_arguments_the_binary_uses_the_library_defaults() {
        let token = AdminToken::new("0123456789abcdef").unwrap();
        let base = Config::new("m:1", token.clone());
        let args = Args::try_parse_from(["bridge"]).unwrap();
        assert_eq!(args.listen, Config::DEFAULT_LISTEN);
        assert_eq!(args.embedded_master, master::Config::DEFAULT_LISTEN);
        let got = args.config(Config::new("m:1", token), true, None);
        assert_eq!(format!("{got:?}"), format!("{base:?}"));
    }

    #[test]
    fn the_http_cap_fits_the_open_file_limit() {
        assert_eq!(
            http_cap(None, None),
            bridge::config::DEFAULT_MAX_HTTP_CONNECTIONS
        );
        assert_eq!(http_cap(None, Some(20_000)), 10_000, "half by default");
        assert_eq!(http_cap(Some(11_024), Some(20_000)), 11_024, "asked, fits");
        assert_eq!(http_cap(Some(30_000), Some(20_000)), 20_000 - RESERVED_FDS);
        assert_eq!(http_cap(Some(500), Some(1_024)), 500);
    }

    #[test]
    fn durations_are_humantime_or_milliseconds() {
        let parse = |s: &str| s.parse::<Interval>().map(|i| i.0);
        assert_eq!(parse("250"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert!(parse("").is_err() && parse("soon").is_err());
        assert_eq!(parse("0"), Err("must be greater than zero".to_owned()));
        assert!(parse("0s").is_err());
        assert_eq!(Interval(Config::DEFAULT_POLL_INTERVAL).to_string(), "1s");
    }
}
