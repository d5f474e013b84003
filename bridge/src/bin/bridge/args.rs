//! The command line (and its `BRIDGE_*` environment variables), and how
//! it makes the library's [`Config`]: clap reads the defaults from the
//! config's constants, so the binary and the library cannot disagree.

use std::{net::SocketAddr, path::PathBuf};

use bridge::{config::EmbeddedMaster, http::forwarded::ForwardedHeader, Config};
use clap::{Parser, Subcommand};
use ipnet::IpNet;

use crate::values::{cidr, count, count_u32, count_u64, Interval};

/// The lobby's WebSocket bridge: serves the web front end and relays
/// browsers to the master server (see bridge/README.md).
#[derive(Debug, Parser)]
#[command(version)]
pub(crate) struct Args {
    /// Something else than serving (run once, then exit).
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// Address for HTTP and WebSocket (`/ws`).
    #[arg(long, env = "BRIDGE_LISTEN", default_value_t = Config::DEFAULT_LISTEN)]
    pub(crate) listen: SocketAddr,
    /// Directory of the built front end.
    #[arg(long = "static", env = "BRIDGE_STATIC", default_value = Config::DEFAULT_STATIC_DIR)]
    pub(crate) static_dir: PathBuf,
    /// Relay to this running master (host:port) instead of starting one.
    #[arg(long, env = "BRIDGE_MASTER")]
    pub(crate) master: Option<String>,
    /// Where the master's change feed is (the master's --feed-listen), or
    /// `off` to poll the master instead. Default: the --master host with
    /// the feed's default port (51964). While the feed cannot be followed
    /// the bridge polls. Needs --master.
    #[arg(
        long,
        env = "BRIDGE_MASTER_FEED",
        requires = "master",
        value_name = "HOST:PORT|off"
    )]
    pub(crate) master_feed: Option<MasterFeed>,
    /// File whose first line is the secret the master's feed asks for (the
    /// master's --feed-token-file).
    #[arg(long, env = "BRIDGE_MASTER_FEED_TOKEN_FILE", requires = "master")]
    pub(crate) master_feed_token_file: Option<PathBuf>,
    /// Where the in-process master listens when --master is not given.
    #[arg(
        long,
        env = "BRIDGE_EMBEDDED_MASTER",
        default_value_t = master::Config::DEFAULT_LISTEN
    )]
    pub(crate) embedded_master: SocketAddr,
    /// File whose first line is the admin token (else BRIDGE_ADMIN_TOKEN,
    /// else a random one printed at start).
    #[arg(long, env = "BRIDGE_ADMIN_TOKEN_FILE")]
    pub(crate) admin_token_file: Option<PathBuf>,
    /// Origin allowed to open /ws (repeatable). Default: the page's own
    /// origin (plus loopback origins with --allow-loopback-origins).
    #[arg(long, env = "BRIDGE_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub(crate) allowed_origin: Vec<String>,
    /// Also let pages on http://localhost:*, http://127.0.0.1:* and
    /// http://[::1]:* open /ws (a front end in development served elsewhere
    /// on this machine). Not needed for the page the bridge serves.
    #[arg(long, env = "BRIDGE_ALLOW_LOOPBACK_ORIGINS")]
    pub(crate) allow_loopback_origins: bool,
    /// WebSocket connections served at once; more get HTTP 503.
    #[arg(long, env = "BRIDGE_MAX_CONNECTIONS", default_value_t = Config::DEFAULT_MAX_CONNECTIONS, value_parser = count)]
    pub(crate) max_connections: usize,
    /// Client TCP connections at once, WebSockets included; more are closed
    /// at once. Default: 16384, or half the open-file limit when smaller.
    #[arg(long, env = "BRIDGE_MAX_HTTP_CONNECTIONS", value_parser = count)]
    pub(crate) max_http_connections: Option<usize>,
    /// Client TCP connections from one address (IPv6: one /64), WebSockets
    /// included; trusted proxies are exempt.
    #[arg(long, env = "BRIDGE_MAX_HTTP_PER_ADDRESS", default_value_t = Config::DEFAULT_MAX_HTTP_PER_ADDRESS, value_parser = count)]
    pub(crate) max_http_per_address: usize,
    /// WebSockets from one client address (IPv6: one /64); more get HTTP 503.
    #[arg(long, env = "BRIDGE_MAX_WS_PER_ADDRESS", default_value_t = Config::DEFAULT_MAX_WS_PER_ADDRESS, value_parser = count)]
    pub(crate) max_ws_per_address: usize,
    /// Time a client has to send a request's whole head.
    #[arg(long, env = "BRIDGE_HEADER_READ_TIMEOUT", default_value_t = Interval(Config::DEFAULT_HEADER_READ_TIMEOUT))]
    pub(crate) header_read_timeout: Interval,
    /// Close an HTTP connection that sent no request for this long.
    #[arg(long, env = "BRIDGE_IDLE_TIMEOUT", default_value_t = Interval(Config::DEFAULT_IDLE_TIMEOUT))]
    pub(crate) idle_timeout: Interval,
    /// Reverse proxy (address or CIDR; repeatable) whose forwarding header
    /// names the client. From anyone else the socket's peer is the client.
    #[arg(
        long = "trusted-proxy",
        env = "BRIDGE_TRUSTED_PROXIES",
        value_delimiter = ',',
        value_name = "CIDR",
        value_parser = cidr
    )]
    pub(crate) trusted_proxy: Vec<IpNet>,
    /// The header the trusted proxies fill in: x-forwarded-for or forwarded.
    #[arg(
        long,
        env = "BRIDGE_FORWARDED_HEADER",
        default_value = "x-forwarded-for"
    )]
    pub(crate) forwarded_header: ForwardedHeader,
    /// How often the shared upstream asks the master for the list
    /// (humantime like "1s", "500ms", or plain milliseconds).
    #[arg(long, env = "BRIDGE_POLL_INTERVAL", default_value_t = Interval(Config::DEFAULT_POLL_INTERVAL))]
    pub(crate) poll_interval: Interval,
    /// Messages per second one connection may send.
    #[arg(long, env = "BRIDGE_RATE_LIMIT", default_value_t = Config::DEFAULT_RATE_PER_SEC)]
    pub(crate) rate_limit: u32,
    /// Messages one connection may send in a burst.
    #[arg(long, env = "BRIDGE_RATE_BURST", default_value_t = Config::DEFAULT_RATE_BURST)]
    pub(crate) rate_burst: u32,
    /// Hide servers' addresses and ports from viewers (admins still see them).
    #[arg(long, env = "BRIDGE_HIDE_ADDRESSES")]
    pub(crate) hide_addresses: bool,
    /// How often to ping each browser.
    #[arg(long, env = "BRIDGE_PING_INTERVAL", default_value_t = Interval(Config::DEFAULT_PING_INTERVAL))]
    pub(crate) ping_interval: Interval,
    /// Close a browser that answered nothing for this long.
    #[arg(long, env = "BRIDGE_PONG_TIMEOUT", default_value_t = Interval(Config::DEFAULT_PONG_TIMEOUT))]
    pub(crate) pong_timeout: Interval,
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
    pub(crate) gameagent_master: Vec<String>,
    /// How often the A2S and GameAgent servers are queried again.
    #[arg(
        long,
        env = "BRIDGE_GAME_POLL_INTERVAL",
        default_value_t = Interval(Config::DEFAULT_GAME_POLL_INTERVAL)
    )]
    pub(crate) game_poll_interval: Interval,
    /// Time limit of one UDP query attempt.
    #[arg(
        long,
        env = "BRIDGE_GAME_QUERY_TIMEOUT",
        default_value_t = Interval(Config::DEFAULT_GAME_QUERY_TIMEOUT)
    )]
    pub(crate) game_query_timeout: Interval,
    /// Attempts after a UDP query's first one fails.
    #[arg(long, env = "BRIDGE_GAME_QUERY_RETRIES", default_value_t = Config::DEFAULT_GAME_QUERY_RETRIES)]
    pub(crate) game_query_retries: u32,
    /// UDP queries in flight at once.
    #[arg(
        long,
        env = "BRIDGE_GAME_QUERY_CONCURRENCY",
        default_value_t = Config::DEFAULT_GAME_QUERY_CONCURRENCY,
        value_parser = count
    )]
    pub(crate) game_query_concurrency: usize,
    /// Also query loopback, private, link-local and other non-global
    /// addresses a GameAgent master lists (a LAN master). Off: skipped.
    #[arg(long, env = "BRIDGE_GAME_ALLOW_PRIVATE")]
    pub(crate) game_allow_private: bool,
    /// Servers taken from one GameAgent master's list at most (after
    /// dropping duplicates and skipped addresses).
    #[arg(long, env = "BRIDGE_GAME_MAX_SERVERS", default_value_t = Config::DEFAULT_GAME_MAX_SERVERS, value_parser = count)]
    pub(crate) game_max_servers: usize,
    /// Longest time one refresh of the game servers takes; servers that
    /// have not answered by then are shown offline ("no answer in time").
    #[arg(long, env = "BRIDGE_GAME_REFRESH_DEADLINE", default_value_t = Interval(Config::DEFAULT_GAME_REFRESH_DEADLINE))]
    pub(crate) game_refresh_deadline: Interval,
    /// Failed bridgeAuth one client address (IPv6: one /64) may make per
    /// --auth-window; then `rate-limited` without checking the token.
    #[arg(long, env = "BRIDGE_AUTH_FAILURES", default_value_t = Config::DEFAULT_AUTH_MAX_FAILURES, value_parser = count_u32)]
    pub(crate) auth_failures: u32,
    /// The window of --auth-failures, from an address's first failure.
    #[arg(long, env = "BRIDGE_AUTH_WINDOW", default_value_t = Interval(Config::DEFAULT_AUTH_WINDOW))]
    pub(crate) auth_window: Interval,
    /// Failed admin sign-ins from all addresses together per
    /// --auth-window; then every attempt is refused unchecked until the
    /// window ends (the admin's too).
    #[arg(long, env = "BRIDGE_AUTH_FAILURES_TOTAL", default_value_t = Config::DEFAULT_AUTH_MAX_FAILURES_TOTAL, value_parser = count_u32)]
    pub(crate) auth_failures_total: u32,
    /// Shortest time between two list answers to one browser's queries;
    /// queries within it are answered once, at its end.
    #[arg(long, env = "BRIDGE_QUERY_INTERVAL", default_value_t = Interval(Config::DEFAULT_QUERY_INTERVAL))]
    pub(crate) query_interval: Interval,

    // The embedded master's settings (refused with --master, whose master
    // has its own flags): see `bridge::config::EmbeddedMaster`.
    /// Embedded master: file of banned addresses and CIDR networks, one a
    /// line with an optional reason; `#` starts a comment. Reloaded on SIGHUP.
    #[arg(long, env = "BRIDGE_MASTER_BAN_FILE", conflicts_with = "master")]
    pub(crate) master_ban_file: Option<PathBuf>,
    /// Embedded master: a network (CIDR or address; repeatable) exempt from
    /// its per-address cap and message rate, e.g. a host running many game
    /// servers. The bridge's own address is always exempt.
    #[arg(
        long,
        env = "BRIDGE_MASTER_EXEMPT",
        value_delimiter = ',',
        value_name = "CIDR",
        value_parser = cidr,
        conflicts_with = "master"
    )]
    pub(crate) master_exempt: Vec<IpNet>,
    /// Embedded master: discard registrations whose serverAddress is not the
    /// IP address the game server connects from (hostnames too).
    #[arg(
        long,
        env = "BRIDGE_MASTER_REQUIRE_PEER_ADDRESS",
        conflicts_with = "master"
    )]
    pub(crate) master_require_peer_address: bool,
    /// Answers per second one client address gets with a body under /api/,
    /// or a whole list on its WebSockets; then /api/ answers 429 and
    /// sockets wait. 304 revalidations and subscribe confirmations are free.
    #[arg(long, env = "BRIDGE_API_RATE", default_value_t = Config::DEFAULT_API_RATE, value_parser = count_u32)]
    pub(crate) api_rate: u32,
    /// Such answers one client address gets at once before --api-rate applies.
    #[arg(long, env = "BRIDGE_API_BURST", default_value_t = Config::DEFAULT_API_BURST, value_parser = count_u32)]
    pub(crate) api_burst: u32,
    /// Where the server key secret (`key-secret`) and the history database
    /// live; created if missing. Default: `$STATE_DIRECTORY` (systemd's
    /// `StateDirectory=`), else `data` in the working directory.
    #[arg(long, env = "BRIDGE_DATA_DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// How often the history records the list (whole seconds).
    #[arg(long, env = "BRIDGE_HISTORY_INTERVAL", default_value_t = Interval(Config::DEFAULT_HISTORY_INTERVAL))]
    pub(crate) history_interval: Interval,
    /// The most the history database may grow to, in bytes (e.g. 500000000);
    /// past it the recording pauses as on a full disk. Default: no cap.
    #[arg(long, env = "BRIDGE_HISTORY_MAX_BYTES", value_parser = count_u64)]
    pub(crate) history_max_bytes: Option<u64>,
    /// A PostgreSQL database (postgres://user@host:port/db) that keeps
    /// the key secret and the history for every bridge given it, instead
    /// of the embedded database in the data directory (which then only
    /// keeps a copy of the key secret). A URL with a password belongs in
    /// --database-url-file: every user of the machine sees a command line.
    #[arg(long, env = "DATABASE_URL", value_name = "URL")]
    pub(crate) database_url: Option<bridge::db::store::DatabaseUrl>,
    /// File whose first line is the database URL, password included (as
    /// --database-url). Without either, systemd's credential
    /// `database-url` (`LoadCredential=`, in $CREDENTIALS_DIRECTORY) is
    /// read when there is one.
    #[arg(
        long,
        env = "DATABASE_URL_FILE",
        conflicts_with = "database_url",
        value_name = "FILE"
    )]
    pub(crate) database_url_file: Option<PathBuf>,
    /// Keys one source (the address, or IPv6 /64, that registered them)
    /// may have recorded in the history per day (about 1 KB each); its
    /// other servers are left out of that day's samples.
    #[arg(long, env = "BRIDGE_HISTORY_KEYS_PER_SOURCE", default_value_t = Config::DEFAULT_HISTORY_KEYS_PER_SOURCE, value_parser = count)]
    pub(crate) history_keys_per_source: usize,
    /// Let webhooks reach loopback, private, link-local and other
    /// non-public addresses (a receiver on the same machine or network).
    /// Off: such URLs are refused.
    #[arg(long, env = "BRIDGE_WEBHOOK_ALLOW_PRIVATE")]
    pub(crate) webhook_allow_private: bool,
    /// The lobby's public address (e.g. https://lobby.example.org), for
    /// absolute links to servers' pages in notifications (and, when https,
    /// the default --push-contact).
    #[arg(long, env = "BRIDGE_PUBLIC_URL", value_parser = public_url)]
    pub(crate) public_url: Option<String>,
    /// Whom push services may contact about this lobby's pushes, carried
    /// by every push: a mailto: or https: URI (e.g.
    /// mailto:admin@lobby.example.org). Default: --public-url when it is
    /// https. Without one Web Push is off: Mozilla's and Apple's push
    /// services refuse pushes without a contact.
    #[arg(long, env = "BRIDGE_PUSH_CONTACT", value_parser = push_contact)]
    pub(crate) push_contact: Option<String>,
    /// How long a Web Push subscription is kept without being renewed (a
    /// page renews it whenever it loads).
    #[arg(long, env = "BRIDGE_PUSH_EXPIRE_AFTER", default_value_t = Interval(Config::DEFAULT_PUSH_EXPIRE_AFTER))]
    pub(crate) push_expire_after: Interval,
    /// Also take http push endpoints, on loopback addresses only (tests
    /// with a push service on the same machine). Off: endpoints must be
    /// https and public.
    #[arg(long, env = "BRIDGE_PUSH_ALLOW_INSECURE")]
    pub(crate) push_allow_insecure: bool,
    /// Web Push subscriptions kept at most (about 4 KB each in the
    /// database); when full, the address holding the most gives up its
    /// oldest to a new one.
    #[arg(long, env = "BRIDGE_PUSH_MAX_SUBSCRIPTIONS", default_value_t = Config::DEFAULT_PUSH_MAX_SUBSCRIPTIONS, value_parser = count)]
    pub(crate) push_max_subscriptions: usize,
    /// Web Push subscriptions one client address (IPv6: its /64) may
    /// hold; more are refused with 429.
    #[arg(long, env = "BRIDGE_PUSH_MAX_PER_ADDRESS", default_value_t = Config::DEFAULT_PUSH_MAX_PER_ADDRESS, value_parser = count)]
    pub(crate) push_max_per_address: usize,
    /// The game's own way in: a URL with the placeholders {address} and
    /// {port}, both required (e.g. "mygame://{address}:{port}" or
    /// "https://play.example/join?host={address}&port={port}"). Every
    /// server gets a Join link to it, filled with its address and port;
    /// not with --hide-addresses. javascript:, data:, vbscript: and file:
    /// are refused.
    #[arg(long, env = "BRIDGE_JOIN_URL", value_name = "TEMPLATE")]
    pub(crate) join_url: Option<protocol::join::JoinTemplate>,
}

/// What the bridge does instead of serving.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Copies the embedded history of a data directory and its key secret
    /// into a PostgreSQL database, so bridges given that database keep
    /// the keys, badges and graphs (run it before they start).
    CopyHistory {
        /// The data directory holding the embedded history.
        #[arg(long, env = "BRIDGE_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// The database to copy into.
        #[arg(long, env = "DATABASE_URL", value_name = "URL")]
        database_url: Option<bridge::db::store::DatabaseUrl>,
        /// File whose first line is the database URL (as
        /// --database-url-file of the bridge).
        #[arg(
            long,
            env = "DATABASE_URL_FILE",
            conflicts_with = "database_url",
            value_name = "FILE"
        )]
        database_url_file: Option<PathBuf>,
    },
}

/// The name of systemd's credential that holds the database URL.
pub(crate) const DATABASE_URL_CREDENTIAL: &str = "database-url";

/// The database URL: given as such, or the first line of `file`, or of
/// systemd's credential `database-url` when neither is given; `None`
/// without any. The error names the file, never what it holds.
pub(crate) fn database_url(
    given: Option<bridge::db::store::DatabaseUrl>,
    file: Option<PathBuf>,
) -> anyhow::Result<Option<bridge::db::store::DatabaseUrl>> {
    use anyhow::Context;
    if given.is_some() {
        return Ok(given);
    }
    let file = file.or_else(|| {
        let dir = std::env::var_os("CREDENTIALS_DIRECTORY")?;
        let path = PathBuf::from(dir).join(DATABASE_URL_CREDENTIAL);
        path.is_file().then_some(path)
    });
    let Some(file) = file else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read the database URL file {}", file.display()))?;
    let line = text.lines().next().unwrap_or_default().trim();
    let url = line.parse().map_err(|e: String| {
        anyhow::anyhow!("the database URL in {} is refused: {e}", file.display())
    })?;
    Ok(Some(url))
}

/// `--push-contact`: a contact push services accept.
fn push_contact(text: &str) -> Result<String, String> {
    bridge::notify::push::vapid::contact(text).map_err(|e| e.to_string())
}

/// `--public-url`: an http(s) URL with a host, kept without a trailing `/`.
fn public_url(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|e| e.to_string())?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err("must be an http or https URL with a host".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("must not have a query or fragment".into());
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// The data directory without `--data-dir`: systemd's state directory
/// (the first, if it names several), else `data`.
pub(crate) fn default_data_dir() -> PathBuf {
    std::env::var_os("STATE_DIRECTORY")
        .and_then(|dirs| {
            std::env::split_paths(&dirs)
                .next()
                .filter(|d| !d.as_os_str().is_empty())
        })
        .unwrap_or_else(|| PathBuf::from("data"))
}

/// `--master-feed`: the feed's address, or polling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MasterFeed {
    /// `off`: poll the master.
    Off,
    /// `HOST:PORT` of the feed.
    At(String),
}

impl std::str::FromStr for MasterFeed {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("off") {
            return Ok(Self::Off);
        }
        match s.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
                Ok(Self::At(s.to_owned()))
            }
            _ => Err(format!("{s:?} is neither HOST:PORT nor `off`")),
        }
    }
}

/// The feed a bridge relaying to `master` follows: the one asked for, none
/// with `off`, else the master's host at the feed's default port.
fn feed_address(master: Option<&str>, feed: Option<MasterFeed>) -> Option<String> {
    let master = master?;
    match feed {
        Some(MasterFeed::Off) => None,
        Some(MasterFeed::At(addr)) => Some(addr),
        None => {
            let host = master.rsplit_once(':').map_or(master, |(host, _)| host);
            Some(format!("{host}:{}", protocol::feed::DEFAULT_PORT))
        }
    }
}

impl Args {
    /// The embedded master's settings.
    pub(crate) fn embedded_master(&self) -> EmbeddedMaster {
        EmbeddedMaster {
            ban_file: self.master_ban_file.clone(),
            exempt: self.master_exempt.clone(),
            require_peer_address: self.master_require_peer_address,
        }
    }

    /// `base` (the master and the token) with these arguments applied.
    pub(crate) fn config(self, base: Config, open_files: Option<u64>) -> Config {
        Config {
            master_feed: feed_address(self.master.as_deref(), self.master_feed),
            static_dir: self.static_dir,
            allowed_origins: self.allowed_origin,
            loopback_origins: self.allow_loopback_origins,
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
            auth_max_failures_total: self.auth_failures_total,
            query_interval: self.query_interval.0,
            api_rate_per_sec: self.api_rate,
            api_burst: self.api_burst,
            data_dir: Some(self.data_dir.unwrap_or_else(default_data_dir)),
            history_interval: self.history_interval.0,
            history_max_bytes: self.history_max_bytes,
            database_url: self.database_url,
            history_keys_per_source: self.history_keys_per_source,
            webhook_allow_private: self.webhook_allow_private,
            public_url: self.public_url,
            push_allow_insecure: self.push_allow_insecure,
            push_contact: self.push_contact,
            push_expire_after: self.push_expire_after.0,
            push_max_subscriptions: self.push_max_subscriptions,
            push_max_per_address: self.push_max_per_address,
            join_url: self.join_url,
            ..base
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use bridge::AdminToken;

    #[test]
    fn without_arguments_the_binary_uses_the_library_defaults() {
        let token = AdminToken::new("0123456789abcdef").unwrap();
        let base = Config {
            data_dir: Some(default_data_dir()),
            ..Config::new("m:1", token.clone())
        };
        let args = Args::try_parse_from(["bridge"]).unwrap();
        assert_eq!(args.listen, Config::DEFAULT_LISTEN);
        assert_eq!(args.embedded_master, master::Config::DEFAULT_LISTEN);
        assert_eq!(args.embedded_master(), EmbeddedMaster::default());
        let got = args.config(Config::new("m:1", token), None);
        assert_eq!(format!("{got:?}"), format!("{base:?}"));
    }

    #[test]
    fn loopback_origins_only_when_asked() {
        let token = AdminToken::new("0123456789abcdef").unwrap();
        let base = || Config::new("m:1", token.clone());
        let default = Args::try_parse_from(["bridge", "--listen", "127.0.0.1:8080"]).unwrap();
        assert!(!default.config(base(), None).loopback_origins);
        let asked = Args::try_parse_from(["bridge", "--allow-loopback-origins"]).unwrap();
        assert!(asked.config(base(), None).loopback_origins);
    }

    #[test]
    fn embedded_master_flags_are_read_and_refused_with_a_remote_master() {
        let args = Args::try_parse_from([
            "bridge",
            "--master-ban-file",
            "bans.txt",
            "--master-exempt",
            "192.0.2.0/24",
            "--master-exempt",
            "198.51.100.7",
            "--master-require-peer-address",
        ])
        .unwrap();
        let options = args.embedded_master();
        assert_eq!(options.ban_file, Some(PathBuf::from("bans.txt")));
        assert_eq!(options.exempt.len(), 2);
        assert!(options.require_peer_address);
        for flag in [
            &["--master-ban-file", "bans.txt"][..],
            &["--master-exempt", "192.0.2.0/24"],
            &["--master-require-peer-address"],
        ] {
            let mut argv = vec!["bridge", "--master", "127.0.0.1:51963"];
            argv.extend_from_slice(flag);
            assert!(Args::try_parse_from(argv).is_err(), "{flag:?}");
        }
    }

    #[test]
    fn the_feed_needs_a_remote_master() {
        assert!(Args::try_parse_from(["bridge", "--master-feed", "m:2"]).is_err());
        assert!(Args::try_parse_from(["bridge", "--master-feed-token-file", "t"]).is_err());
        let feed = |argv: &[&str]| {
            let args = Args::try_parse_from(argv).unwrap();
            let token = AdminToken::new("0123456789abcdef").unwrap();
            args.config(Config::new("m:1", token), None).master_feed
        };
        assert_eq!(
            feed(&["bridge", "--master", "m:1", "--master-feed", "m:2"]).as_deref(),
            Some("m:2")
        );
        // Followed by default, at the master's host and the feed's port.
        assert_eq!(
            feed(&["bridge", "--master", "master.example:51963"]).as_deref(),
            Some("master.example:51964")
        );
        assert_eq!(
            feed(&["bridge", "--master", "[::1]:7000"]).as_deref(),
            Some("[::1]:51964")
        );
        assert_eq!(
            feed(&["bridge", "--master", "m:1", "--master-feed", "off"]),
            None
        );
        assert_eq!(
            feed(&["bridge"]),
            None,
            "an embedded master is followed itself"
        );
        assert!(Args::try_parse_from(["bridge", "--master", "m:1", "--master-feed", "m"]).is_err());
        assert!(Args::try_parse_from([
            "bridge",
            "--master",
            "m:1",
            "--master-feed-token-file",
            "t"
        ])
        .is_ok());
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
    fn the_database_url_comes_from_a_file_and_the_error_never_shows_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("database-url");
        std::fs::write(
            &file,
            "postgres://lobby:s3cret@127.0.0.1:6543/lobby\nignored\n",
        )
        .unwrap();
        let url = database_url(None, Some(file.clone())).unwrap().unwrap();
        assert_eq!(url.to_string(), "postgresql://lobby@127.0.0.1:6543/lobby");
        std::fs::write(&file, "mysql://lobby:s3cret@db/lobby\n").unwrap();
        let e = database_url(None, Some(file.clone()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("database-url") && !e.contains("s3cret"), "{e}");
        assert!(database_url(None, Some(dir.path().join("none"))).is_err());
        let given: bridge::db::store::DatabaseUrl = "postgres://a@b/c".parse().unwrap();
        let kept = database_url(Some(given), Some(file)).unwrap().unwrap();
        assert_eq!(kept.to_string(), "postgresql://a@b:5432/c");
        assert!(
            Args::try_parse_from([
                "bridge",
                "--database-url",
                "postgres://a@b/c",
                "--database-url-file",
                "f"
            ])
            .is_err(),
            "one or the other"
        );
    }
}
