//! `master`: runs the lobby's master server until SIGINT or SIGTERM;
//! SIGHUP reloads the ban file.

use std::{io::Write, net::SocketAddr, path::PathBuf, time::Duration};

use anyhow::Context;
use clap::Parser;
use master::{
    bans::BanList,
    feed::{FeedConfig, FeedListen, FeedServer, FeedToken},
    signal::shutdown_signal,
    Config, IpNet, Master,
};
use tokio_util::sync::CancellationToken;

/// The lobby's master server: game servers register over TCP, clients query
/// the list (see docs/protocol.md for the protocol and SECURITY.md for the limits).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "MASTER_LISTEN", default_value_t = Config::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Connections served at once (exempt ones included); further ones are
    /// closed at once.
    #[arg(long, env = "MASTER_MAX_CONNECTIONS", default_value_t = Config::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// Connections served at once from one address (IPv6: one /64).
    #[arg(long, env = "MASTER_MAX_PER_ADDRESS", default_value_t = Config::DEFAULT_MAX_PER_ADDRESS)]
    max_per_address: usize,
    /// A network (CIDR, or a single address) exempt from the per-address
    /// cap and the message rate limit, e.g. a hosting provider running many
    /// servers behind one address. Repeatable; comma-separated in the
    /// environment.
    #[arg(long, env = "MASTER_EXEMPT", value_delimiter = ',', value_parser = network)]
    exempt: Vec<IpNet>,
    /// A connection that sends no valid message this long after connecting
    /// is closed (humantime like "10s", or plain milliseconds).
    #[arg(long, env = "MASTER_FIRST_MESSAGE_TIMEOUT", default_value = Config::DEFAULT_FIRST_MESSAGE_TIMEOUT_TEXT, value_parser = duration)]
    first_message_timeout: Duration,
    /// Messages a connection may send per second on average; the excess is
    /// discarded.
    #[arg(long, env = "MASTER_MESSAGE_RATE", default_value_t = Config::DEFAULT_MESSAGE_RATE)]
    message_rate: u32,
    /// Messages a connection may send at once before the rate applies.
    #[arg(long, env = "MASTER_MESSAGE_BURST", default_value_t = Config::DEFAULT_MESSAGE_BURST)]
    message_burst: u32,
    /// Discarded (over-rate) messages after which a connection is closed as
    /// a flood; the count restarts once the peer is quiet long enough to
    /// refill its burst.
    #[arg(long, env = "MASTER_FLOOD_CLOSE_AFTER", default_value_t = Config::DEFAULT_FLOOD_CLOSE_AFTER)]
    flood_close_after: u32,
    /// File of banned addresses and CIDR networks, one a line with an
    /// optional reason after it; `#` starts a comment. Reloaded on SIGHUP.
    #[arg(long, env = "MASTER_BAN_FILE")]
    ban_file: Option<PathBuf>,
    /// Discard registrations whose serverAddress is not the IP address the
    /// game server connects from (hostnames are discarded too).
    #[arg(long, env = "MASTER_REQUIRE_PEER_ADDRESS")]
    require_peer_address: bool,
    /// Seconds a connection may be silent before TCP keepalive probes check
    /// that its peer still exists (spread by up to half again per connection,
    /// then up to 6 probes about 10 s apart).
    #[arg(
        long,
        env = "MASTER_KEEPALIVE_SECS",
        default_value_t = Config::DEFAULT_KEEPALIVE.as_secs()
    )]
    keepalive_secs: u64,
    /// Where bridges subscribe to the change feed (IP:PORT), or `off`. A
    /// port of its own, never the public one. Default 127.0.0.1:51964
    /// (bridges on this machine); when that port is taken the master starts
    /// without the feed and says so, while an address given here must be free.
    #[arg(long, env = "MASTER_FEED_LISTEN", value_name = "ADDR|off")]
    feed_listen: Option<FeedListen>,
    /// File whose first line is the secret a feed subscriber must send (at
    /// least 16 characters). Without it, anyone who reaches the feed's port
    /// may subscribe: keep it on loopback or a private network.
    #[arg(long, env = "MASTER_FEED_TOKEN_FILE")]
    feed_token_file: Option<PathBuf>,
    /// Feed subscribers (bridges) served at once; more are closed at once.
    #[arg(long, env = "MASTER_FEED_MAX_SUBSCRIBERS", default_value_t = FeedConfig::DEFAULT_MAX_SUBSCRIBERS)]
    feed_max_subscribers: usize,
    /// Feed connections one address (IPv6: one /64) may hold at once,
    /// subscribed or still to send its subscribe; more are closed at once,
    /// so one host cannot take the slots other bridges need.
    #[arg(long, env = "MASTER_FEED_MAX_PER_ADDRESS", default_value_t = FeedConfig::DEFAULT_MAX_PER_ADDRESS)]
    feed_max_per_address: usize,
}

fn duration(s: &str) -> Result<Duration, String> {
    if let Ok(ms) = s.parse::<u64>() {
        return Ok(Duration::from_millis(ms));
    }
    humantime::parse_duration(s).map_err(|e| e.to_string())
}

fn network(s: &str) -> Result<IpNet, String> {
    master::bans::parse_net(s)
        .ok_or_else(|| format!("{s:?} is neither an IP address nor a CIDR network"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    master::logging::init();
    let args = Args::parse();
    let config = Config {
        max_connections: args.max_connections,
        max_per_address: args.max_per_address,
        exempt: args.exempt.clone(),
        first_message_timeout: args.first_message_timeout,
        message_rate: args.message_rate,
        message_burst: args.message_burst,
        flood_close_after: args.flood_close_after,
        require_peer_address: args.require_peer_address,
        keepalive: Duration::from_secs(args.keepalive_secs),
        ..Config::default()
    };
    config.validate().context("invalid configuration")?;
    if config.max_per_address >= config.max_connections {
        tracing::warn!(
            "--max-per-address ({}) is not below --max-connections ({}): one address can \
             take every slot",
            config.max_per_address,
            config.max_connections
        );
    }
    let master = Master::new(config);
    if let Some(path) = &args.ban_file {
        let bans = BanList::load_logged(path)?;
        tracing::info!(file = %path.display(), entries = bans.len(), "ban list loaded");
        master.set_bans(bans);
    }
    // Every connection is a file descriptor: use all the hard limit allows.
    master::fdlimit::raise_to_hard_limit();
    let listener =
        master::bind(args.listen).with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, "master listening");
    #[cfg(unix)]
    if let Some(path) = args.ban_file.clone() {
        master::signal::reload_bans_on_hangup(master.clone(), path)
            .context("cannot listen for SIGHUP")?;
    }
    let stop = CancellationToken::new();
    let feed = start_feed(&args, &master, &stop).await?;
    // One machine-readable line on stdout, so scripts and tests can wait for
    // readiness (and learn the port when listening on port 0); then the
    // feed's, if it listens (bound already: it accepts from now on).
    println!("master listening on {addr}");
    if let Some((_, feed_addr)) = &feed {
        // A reader that took only the first line may have closed the pipe:
        // println! would panic on that, so the error is ignored.
        let _ = writeln!(std::io::stdout(), "master feed listening on {feed_addr}");
    }
    let signal = stop.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        signal.cancel();
    });
    let served = master.run(listener, stop.clone().cancelled_owned()).await;
    stop.cancel();
    if let Some((feed, _)) = feed {
        let _ = tokio::time::timeout(Duration::from_secs(5), feed).await;
    }
    served?;
    Ok(())
}

/// Starts the change feed unless it is off; returns its task and address.
async fn start_feed(
    args: &Args,
    master: &Master,
    stop: &CancellationToken,
) -> anyhow::Result<Option<(tokio::task::JoinHandle<()>, std::net::SocketAddr)>> {
    let (at, explicit) = match args.feed_listen {
        Some(FeedListen::Off) => return Ok(None),
        Some(FeedListen::At(at)) => (at, true),
        None => match FeedListen::DEFAULT {
            FeedListen::At(at) => (at, false),
            FeedListen::Off => return Ok(None),
        },
    };
    let token = match &args.feed_token_file {
        Some(path) => Some(
            FeedToken::from_file(path)
                .with_context(|| format!("the feed token in {} is refused", path.display()))?,
        ),
        None => None,
    };
    let config = FeedConfig {
        token,
        max_subscribers: args.feed_max_subscribers,
        max_per_address: args.feed_max_per_address,
        ..FeedConfig::default()
    };
    config.validate().context("invalid feed configuration")?;
    let listener = match tokio::net::TcpListener::bind(at).await {
        Ok(l) => l,
        Err(e) if !explicit => {
            tracing::warn!(addr = %at, error = %e, "the change feed is off: its default address is taken (bridges poll instead; --feed-listen picks another address, `off` silences this)");
            return Ok(None);
        }
        Err(e) => return Err(e).with_context(|| format!("cannot listen for the feed on {at}")),
    };
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && config.token.is_none() {
        tracing::warn!(%addr, "the change feed listens beyond loopback without --feed-token-file: anyone who reaches it may subscribe");
    }
    tracing::info!(%addr, "change feed listening");
    let feed = FeedServer::new(master.registry(), config);
    let stop = stop.clone();
    let task = tokio::spawn(async move {
        feed.run(listener, stop.cancelled_owned()).await;
    });
    Ok(Some((task, addr)))
}
