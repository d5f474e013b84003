//! `bridge`: serves the front end and relays browsers to the master, which
//! it runs in-process unless `--master` names one; until SIGINT or SIGTERM.

use std::{io::Write, net::SocketAddr, path::PathBuf, time::Duration};

use anyhow::Context;
use bridge::{AdminToken, Config};
use clap::Parser;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The lobby's WebSocket bridge: serves the web front end and relays
/// browsers to the master server (see the README).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address for HTTP and WebSocket (`/ws`).
    #[arg(long, env = "BRIDGE_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Directory of the built front end.
    #[arg(long = "static", env = "BRIDGE_STATIC", default_value = "dist")]
    static_dir: PathBuf,
    /// Relay to this running master (host:port) instead of starting one.
    #[arg(long, env = "BRIDGE_MASTER")]
    master: Option<String>,
    /// Where the in-process master listens when --master is not given.
    #[arg(
        long,
        env = "BRIDGE_EMBEDDED_MASTER",
        default_value = "127.0.0.1:51963"
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
    #[arg(long, env = "BRIDGE_MAX_CONNECTIONS", default_value_t = 10_000)]
    max_connections: usize,
    /// How often the shared upstream asks the master for the list
    /// (humantime like "1s", "500ms", or plain milliseconds).
    #[arg(long, env = "BRIDGE_POLL_INTERVAL", default_value = "1s", value_parser = duration)]
    poll_interval: Duration,
    /// Messages per second one connection may send.
    #[arg(long, env = "BRIDGE_RATE_LIMIT", default_value_t = 20)]
    rate_limit: u32,
    /// Messages one connection may send in a burst.
    #[arg(long, env = "BRIDGE_RATE_BURST", default_value_t = 40)]
    rate_burst: u32,
    /// Hide servers' addresses and ports from viewers (admins still see them).
    #[arg(long, env = "BRIDGE_HIDE_ADDRESSES")]
    hide_addresses: bool,
    /// How often to ping each browser.
    #[arg(long, env = "BRIDGE_PING_INTERVAL", default_value = "30s", value_parser = duration)]
    ping_interval: Duration,
    /// Close a browser that answered nothing for this long.
    #[arg(long, env = "BRIDGE_PONG_TIMEOUT", default_value = "60s", value_parser = duration)]
    pong_timeout: Duration,
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
    #[arg(long, env = "BRIDGE_GAME_POLL_INTERVAL", default_value = "10s", value_parser = duration)]
    game_poll_interval: Duration,
    /// Time limit of one UDP query attempt.
    #[arg(long, env = "BRIDGE_GAME_QUERY_TIMEOUT", default_value = "1s", value_parser = duration)]
    game_query_timeout: Duration,
    /// Attempts after a UDP query's first one fails.
    #[arg(long, env = "BRIDGE_GAME_QUERY_RETRIES", default_value_t = 2)]
    game_query_retries: u32,
    /// UDP queries in flight at once.
    #[arg(long, env = "BRIDGE_GAME_QUERY_CONCURRENCY", default_value_t = 64)]
    game_query_concurrency: usize,
    /// Also query loopback, private, link-local and other non-global
    /// addresses a GameAgent master lists (a LAN master). Off: skipped.
    #[arg(long, env = "BRIDGE_GAME_ALLOW_PRIVATE")]
    game_allow_private: bool,
    /// Servers taken from one GameAgent master's list at most (after
    /// dropping duplicates and skipped addresses).
    #[arg(long, env = "BRIDGE_GAME_MAX_SERVERS", default_value_t = 512)]
    game_max_servers: usize,
    /// Longest time one refresh of the game servers takes; servers that
    /// have not answered by then are shown offline ("no answer in time").
    #[arg(long, env = "BRIDGE_GAME_REFRESH_DEADLINE", default_value = "15s", value_parser = refresh_deadline)]
    game_refresh_deadline: Duration,
}

/// Parses "1s", "250ms", "2m" or plain milliseconds.
fn duration(s: &str) -> Result<Duration, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse()
            .map(Duration::from_millis)
            .map_err(|e| e.to_string());
    }
    humantime::parse_duration(s).map_err(|e| e.to_string())
}

/// A [`duration`] above zero: a zero deadline would time out every query.
fn refresh_deadline(s: &str) -> Result<Duration, String> {
    match duration(s)? {
        d if d.is_zero() => Err("must be above zero".to_owned()),
        d => Ok(d),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    master::logging::init();
    let args = Args::parse();

    let (token, generated) = if let Some(path) = &args.admin_token_file {
        (AdminToken::from_file(path)?, false)
    } else if let Ok(token) = std::env::var("BRIDGE_ADMIN_TOKEN") {
        (
            AdminToken::new(&token).context("BRIDGE_ADMIN_TOKEN is empty")?,
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
            let stop = shutdown.clone();
            let task = tokio::spawn(async move {
                master::run(
                    master_listener,
                    master::Config::default(),
                    stop.cancelled_owned(),
                )
                .await;
            });
            (master_addr.to_string(), Some(task))
        }
    };

    let config = Config {
        static_dir: args.static_dir,
        allowed_origins: args.allowed_origin,
        loopback_origins: addr.ip().is_loopback(),
        max_connections: args.max_connections,
        poll_interval: args.poll_interval,
        rate_per_sec: args.rate_limit,
        rate_burst: args.rate_burst,
        flood_close_after: args.rate_burst.max(1),
        hide_addresses: args.hide_addresses,
        ping_interval: args.ping_interval,
        pong_timeout: args.pong_timeout,
        a2s: args.a2s,
        gameagent_masters: args.gameagent_master,
        game_poll_interval: args.game_poll_interval,
        game_query_timeout: args.game_query_timeout,
        game_query_retries: args.game_query_retries,
        game_query_concurrency: args.game_query_concurrency.max(1),
        game_allow_private: args.game_allow_private,
        game_max_servers: args.game_max_servers,
        game_refresh_deadline: args.game_refresh_deadline,
        ..Config::new(master_addr.clone(), token.clone())
    };

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
    let result = bridge::run(listener, config, shutdown.clone().cancelled_owned()).await;
    shutdown.cancel();
    if let Some(task) = embedded {
        let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
    }
    result?;
    Ok(())
}
