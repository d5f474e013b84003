//! The bridge's tunables, with the defaults the binary uses.

use std::{
    net::{Ipv4Addr, SocketAddr, SocketAddrV4},
    path::PathBuf,
    time::Duration,
};

use ipnet::IpNet;

use master::feed::FeedToken;

use crate::{error::ConfigError, http::forwarded::ForwardedHeader, token::AdminToken};

/// Largest WebSocket frame or message a browser may send (64 KiB); larger
/// ones close the socket with 1009.
pub const MAX_WS_MESSAGE: usize = 64 * 1024;

/// Text messages to browsers larger than this leave as fragments of this
/// size: tungstenite copies each frame whole into a per-connection write
/// buffer that never shrinks, so unfragmented lists would keep every
/// subscriber's buffer as large as the largest list ever pushed.
pub const WS_FRAGMENT: usize = 16 * 1024;

/// Largest reply the bridge reads from the master. The master's own 64 KiB
/// limit is for what it receives; its list grows with the servers.
pub const MAX_MASTER_REPLY: usize = 16 << 20;

/// Digits of [`MAX_MASTER_REPLY`]'s length field.
pub const MAX_MASTER_REPLY_DIGITS: usize = 8;

/// Client TCP connections served at once unless configured otherwise.
pub const DEFAULT_MAX_HTTP_CONNECTIONS: usize = 16_384;

/// Everything a [`crate::Bridge`] needs; tests shorten the intervals.
#[derive(Debug, Clone)]
pub struct Config {
    /// The master to relay to (`host:port`); the bridge never connects anywhere else.
    pub master: String,
    /// The remote master's change feed (`host:port`, `--master-feed`): the
    /// list is followed there instead of polled, polling only while the
    /// feed is unreachable. `None`: poll.
    pub master_feed: Option<String>,
    /// The secret the feed asks for (`--master-feed-token-file`).
    pub master_feed_token: Option<FeedToken>,
    /// Longest wait between attempts to reach the feed while polling
    /// meanwhile: longer than [`Config::reconnect_max`], as the list stays
    /// current by polling, and a master without a feed is asked no more
    /// often than this.
    pub feed_retry_max: Duration,
    /// The built front end; missing files fall back to its `index.html`.
    pub static_dir: PathBuf,
    /// What `bridgeAuth` must carry to make a connection an admin.
    pub admin_token: AdminToken,
    /// Allowed `Origin`s of WebSocket upgrades. Empty: the request's own
    /// host, plus `http://localhost:*` / `http://127.0.0.1:*` when
    /// `loopback_origins` is set.
    pub allowed_origins: Vec<String>,
    /// Whether local development origins (`http://localhost:*`,
    /// `http://127.0.0.1:*`, `http://[::1]:*`) are allowed besides the
    /// page's own: off unless asked for (`--allow-loopback-origins`), since
    /// behind a proxy on the same machine every page on it is "loopback".
    pub loopback_origins: bool,
    /// WebSocket connections served at once; upgrades beyond get HTTP 503.
    pub max_connections: usize,
    /// How often the shared upstream asks the master for the list.
    pub poll_interval: Duration,
    /// Sustained messages per second one connection may send.
    pub rate_per_sec: u32,
    /// Messages one connection may send at once before the rate applies.
    pub rate_burst: u32,
    /// Refused frames in a row (rate-limited) after which the socket is
    /// closed with 1008.
    pub flood_close_after: u32,
    /// Strip `address` and `port` from lists sent to viewers.
    pub hide_addresses: bool,
    /// How often the bridge pings each browser.
    pub ping_interval: Duration,
    /// Close a socket that sent nothing (no pong either) for this long.
    pub pong_timeout: Duration,
    /// Time limit for connecting to the master and for each of its replies.
    pub master_timeout: Duration,
    /// First wait between reconnection attempts to the master; doubles.
    pub reconnect_min: Duration,
    /// Longest wait between reconnection attempts to the master: short
    /// (500 ms), because admins' pages register their test servers again
    /// on the `bridgeStatus up` that the next successful attempt sends, and
    /// viewers may only get the complete list at the poll after that (the
    /// admins' own refreshes can arrive out of order): 0.5 s + one poll
    /// interval stays within the 2 s that re-registration may take.
    pub reconnect_max: Duration,
    /// Time limit for one write to a browser; a browser that does not read
    /// for this long is dropped.
    pub write_timeout: Duration,
    /// How long a closing socket waits for the browser's close frame.
    pub close_wait: Duration,
    /// How long shutdown waits for WebSockets to close before giving up.
    pub shutdown_grace: Duration,
    /// Valve A2S servers to show (`host:port`); empty: none.
    pub a2s: Vec<String>,
    /// Serious Engine GameAgent masters whose servers to show (`host:port`).
    pub gameagent_masters: Vec<String>,
    /// How often the other games' servers are queried again.
    pub game_poll_interval: Duration,
    /// Time limit of one UDP query attempt to another game's server.
    pub game_query_timeout: Duration,
    /// Attempts after a UDP query's first one fails.
    pub game_query_retries: u32,
    /// UDP queries in flight at once.
    pub game_query_concurrency: usize,
    /// Client TCP connections served at once, WebSockets included; more are
    /// closed right after `accept` (with a best-effort 503), so a flood
    /// cannot use up the process's file descriptors.
    pub max_http_connections: usize,
    /// Client TCP connections from one address (IPv6: one /64) at once,
    /// WebSockets included. Connections from trusted proxies are exempt.
    pub max_http_per_address: usize,
    /// WebSockets from one client address (IPv6: one /64) at once; more get
    /// HTTP 503. Behind a trusted proxy the forwarded address counts.
    pub max_ws_per_address: usize,
    /// Time a client has to send a request's whole head; slower ones are
    /// closed (slowloris).
    pub header_read_timeout: Duration,
    /// An HTTP connection with no request for this long is closed.
    pub idle_timeout: Duration,
    /// Reverse proxies whose forwarding header names the client; from
    /// anyone else the socket's peer is the client.
    pub trusted_proxies: Vec<IpNet>,
    /// The header the trusted proxies fill in.
    pub forwarded_header: ForwardedHeader,
    /// Query loopback, private and other non-global addresses a GameAgent
    /// master lists (a LAN master, tests); off: a master cannot aim the
    /// bridge's queries at the bridge's own networks.
    pub game_allow_private: bool,
    /// Servers taken from one GameAgent master's list at most.
    pub game_max_servers: usize,
    /// Longest time one refresh round of the other games' servers takes;
    /// whatever has not answered by then is offline ("no answer in time").
    pub game_refresh_deadline: Duration,
    /// Failed `bridgeAuth` one client address (IPv6: one /64) may make
    /// within [`Config::auth_window`]; further attempts get `rate-limited`
    /// without the token being checked until the window ends.
    pub auth_max_failures: u32,
    /// The window of [`Config::auth_max_failures`], from the first failure.
    pub auth_window: Duration,
    /// Failed admin sign-ins from all addresses together within one
    /// [`Config::auth_window`]; past it every attempt is refused unchecked
    /// until the window ends, so many addresses together guess no faster
    /// (the admin is locked out meanwhile too, as the price of the bound).
    pub auth_max_failures_total: u32,
    /// Shortest time between two list answers to one browser's
    /// `msQueryGameServers` (from the shared cache); queries within it are
    /// answered once, at its end.
    pub query_interval: Duration,
    /// Sustained answers per second one client address (IPv6: one /64;
    /// behind a trusted proxy the forwarded one) gets that carry a body
    /// under `/api/` or, on its WebSockets, a whole list or a catch-up;
    /// over it `/api/` answers `429 Too Many Requests` and sockets wait.
    /// Revalidations answered `304` and subscribe confirmations are free.
    pub api_rate_per_sec: u32,
    /// Such answers one client address gets at once before the rate applies.
    pub api_burst: u32,
    /// Where the server key secret and the history database live
    /// (created if missing); `None`: a random secret and a history in
    /// memory, both gone when the bridge stops (tests).
    pub data_dir: Option<PathBuf>,
    /// How often the history records the list (`docs/protocol.md` §2.2):
    /// whole seconds, at least one.
    pub history_interval: Duration,
    /// The most the history database may grow to, in bytes (`None`: as
    /// far as the disk allows). Past it writes fail as on a full disk:
    /// the recording pauses, the rest of the bridge goes on.
    pub history_max_bytes: Option<u64>,
    /// The PostgreSQL database that keeps the key secret and the history
    /// for every bridge given it (`docs/protocol.md` §2.3); `None`: the
    /// embedded database in [`Config::data_dir`].
    pub database_url: Option<crate::db::store::DatabaseUrl>,
    /// Keys one source (the network that registered them) may have
    /// recorded in the history per day (`history::admission`): bounds how
    /// fast one host can make the history grow.
    pub history_keys_per_source: usize,
    /// Let webhooks reach loopback, private and other non-public addresses
    /// (`--webhook-allow-private`; tests, a receiver on the same network).
    pub webhook_allow_private: bool,
    /// The lobby's public address (`--public-url`, no trailing `/`): links
    /// to a server's page in notifications are absolute with it.
    pub public_url: Option<String>,
    /// Also take `http` push endpoints, and only on loopback addresses
    /// (`--push-allow-insecure`; tests with a push service on loopback).
    pub push_allow_insecure: bool,
    /// The VAPID contact every push carries (`--push-contact`, a `mailto:`
    /// or `https:` URI); `None`: [`Config::public_url`] when that is one.
    /// Without either, Web Push is off.
    pub push_contact: Option<String>,
    /// How long a push subscription is kept without being renewed.
    pub push_expire_after: Duration,
    /// Push subscriptions the bridge keeps at most, over all clients.
    pub push_max_subscriptions: usize,
    /// Push subscriptions one client address (IPv6: its /64) may hold.
    pub push_max_per_address: usize,
    /// The game's own way in (`--join-url`): a checked template that gives
    /// every listed server a Join link (`docs/protocol.md` §2.6); `None`:
    /// no Join. With [`Config::hide_addresses`] there is none either.
    pub join_url: Option<protocol::join::JoinTemplate>,
    /// How long a listed key stays unlisted before it is offline
    /// (`docs/protocol.md` §2.4: 60 s; tests shorten it).
    pub offline_after: Duration,
}

impl Config {
    /// Where the binary serves HTTP unless told.
    pub const DEFAULT_LISTEN: SocketAddr =
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080));
    /// Default of [`Config::static_dir`].
    pub const DEFAULT_STATIC_DIR: &str = "dist";
    /// Default of [`Config::max_connections`].
    pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
    /// Default of [`Config::feed_retry_max`].
    pub const DEFAULT_FEED_RETRY_MAX: Duration = Duration::from_secs(5);
    /// Default of [`Config::poll_interval`].
    pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
    /// Default of [`Config::rate_per_sec`].
    pub const DEFAULT_RATE_PER_SEC: u32 = 20;
    /// Default of [`Config::rate_burst`] (and of [`Config::flood_close_after`]).
    pub const DEFAULT_RATE_BURST: u32 = 40;
    /// Default of [`Config::ping_interval`].
    pub const DEFAULT_PING_INTERVAL: Duration = Duration::from_secs(30);
    /// Default of [`Config::pong_timeout`].
    pub const DEFAULT_PONG_TIMEOUT: Duration = Duration::from_secs(60);
    /// Default of [`Config::game_poll_interval`].
    pub const DEFAULT_GAME_POLL_INTERVAL: Duration = Duration::from_secs(10);
    /// Default of [`Config::game_query_timeout`].
    pub const DEFAULT_GAME_QUERY_TIMEOUT: Duration = Duration::from_secs(1);
    /// Default of [`Config::game_query_retries`].
    pub const DEFAULT_GAME_QUERY_RETRIES: u32 = 2;
    /// Default of [`Config::game_query_concurrency`].
    pub const DEFAULT_GAME_QUERY_CONCURRENCY: usize = 64;
    /// Default of [`Config::max_http_per_address`]: room for a LAN party or
    /// a carrier-grade NAT behind one address.
    pub const DEFAULT_MAX_HTTP_PER_ADDRESS: usize = 128;
    /// Default of [`Config::max_ws_per_address`].
    pub const DEFAULT_MAX_WS_PER_ADDRESS: usize = 64;
    /// Default of [`Config::header_read_timeout`].
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default of [`Config::idle_timeout`].
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
    /// Default of [`Config::game_max_servers`].
    pub const DEFAULT_GAME_MAX_SERVERS: usize = 512;
    /// Default of [`Config::game_refresh_deadline`].
    pub const DEFAULT_GAME_REFRESH_DEADLINE: Duration = Duration::from_secs(15);
    /// Default of [`Config::auth_max_failures`].
    pub const DEFAULT_AUTH_MAX_FAILURES: u32 = 5;
    /// Default of [`Config::auth_window`].
    pub const DEFAULT_AUTH_WINDOW: Duration = Duration::from_secs(60);
    /// Default of [`Config::auth_max_failures_total`].
    pub const DEFAULT_AUTH_MAX_FAILURES_TOTAL: u32 = 100;
    /// Default of [`Config::query_interval`]: the default poll interval, as
    /// the shared list rarely changes faster.
    pub const DEFAULT_QUERY_INTERVAL: Duration = Duration::from_secs(1);
    /// Default of [`Config::api_rate_per_sec`]: a page reconnecting costs
    /// one or two answers, a bot that revalidates none.
    pub const DEFAULT_API_RATE: u32 = 2;
    /// Default of [`Config::api_burst`]: a few tabs loading (or a page
    /// reloading several times) at once.
    pub const DEFAULT_API_BURST: u32 = 10;
    /// Default of [`Config::history_interval`].
    pub const DEFAULT_HISTORY_INTERVAL: Duration = Duration::from_secs(60);
    /// Default of [`Config::history_keys_per_source`]: about 2 MB of
    /// history per source and day (see `db::history::admission` for the
    /// arithmetic).
    pub const DEFAULT_HISTORY_KEYS_PER_SOURCE: usize = 2_000;
    /// Default of [`Config::push_expire_after`]: the page renews a
    /// subscription on every load, so a player who opens the lobby once a
    /// month keeps theirs.
    pub const DEFAULT_PUSH_EXPIRE_AFTER: Duration = Duration::from_secs(30 * 24 * 3600);
    /// Default of [`Config::offline_after`]: how long a key stays unlisted
    /// before it is offline (`docs/protocol.md` §2.4).
    pub const DEFAULT_OFFLINE_AFTER: Duration =
        Duration::from_secs(protocol::watch::OFFLINE_AFTER_SECS);
    /// Push subscriptions kept at most (about 1 KB each in memory).
    pub const DEFAULT_PUSH_MAX_SUBSCRIPTIONS: usize = 50_000;
    /// Push subscriptions per client address (a household's browsers
    /// behind one address).
    pub const DEFAULT_PUSH_MAX_PER_ADDRESS: usize = 20;

    /// A configuration with the defaults of the binary.
    pub fn new(master: impl Into<String>, admin_token: AdminToken) -> Self {
        Self {
            master: master.into(),
            master_feed: None,
            master_feed_token: None,
            feed_retry_max: Self::DEFAULT_FEED_RETRY_MAX,
            static_dir: PathBuf::from(Self::DEFAULT_STATIC_DIR),
            admin_token,
            allowed_origins: Vec::new(),
            loopback_origins: false,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            poll_interval: Self::DEFAULT_POLL_INTERVAL,
            rate_per_sec: Self::DEFAULT_RATE_PER_SEC,
            rate_burst: Self::DEFAULT_RATE_BURST,
            flood_close_after: Self::DEFAULT_RATE_BURST,
            hide_addresses: false,
            ping_interval: Self::DEFAULT_PING_INTERVAL,
            pong_timeout: Self::DEFAULT_PONG_TIMEOUT,
            master_timeout: Duration::from_secs(5),
            reconnect_min: Duration::from_millis(100),
            reconnect_max: Duration::from_millis(500),
            write_timeout: Duration::from_secs(10),
            close_wait: Duration::from_secs(1),
            shutdown_grace: Duration::from_secs(3),
            a2s: Vec::new(),
            gameagent_masters: Vec::new(),
            game_poll_interval: Self::DEFAULT_GAME_POLL_INTERVAL,
            game_query_timeout: Self::DEFAULT_GAME_QUERY_TIMEOUT,
            game_query_retries: Self::DEFAULT_GAME_QUERY_RETRIES,
            game_query_concurrency: Self::DEFAULT_GAME_QUERY_CONCURRENCY,
            max_http_connections: DEFAULT_MAX_HTTP_CONNECTIONS,
            max_http_per_address: Self::DEFAULT_MAX_HTTP_PER_ADDRESS,
            max_ws_per_address: Self::DEFAULT_MAX_WS_PER_ADDRESS,
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            trusted_proxies: Vec::new(),
            forwarded_header: ForwardedHeader::XForwardedFor,
            game_allow_private: false,
            game_max_servers: Self::DEFAULT_GAME_MAX_SERVERS,
            game_refresh_deadline: Self::DEFAULT_GAME_REFRESH_DEADLINE,
            auth_max_failures: Self::DEFAULT_AUTH_MAX_FAILURES,
            auth_window: Self::DEFAULT_AUTH_WINDOW,
            auth_max_failures_total: Self::DEFAULT_AUTH_MAX_FAILURES_TOTAL,
            query_interval: Self::DEFAULT_QUERY_INTERVAL,
            api_rate_per_sec: Self::DEFAULT_API_RATE,
            api_burst: Self::DEFAULT_API_BURST,
            data_dir: None,
            history_interval: Self::DEFAULT_HISTORY_INTERVAL,
            history_max_bytes: None,
            database_url: None,
            history_keys_per_source: Self::DEFAULT_HISTORY_KEYS_PER_SOURCE,
            webhook_allow_private: false,
            public_url: None,
            push_allow_insecure: false,
            push_contact: None,
            push_expire_after: Self::DEFAULT_PUSH_EXPIRE_AFTER,
            push_max_subscriptions: Self::DEFAULT_PUSH_MAX_SUBSCRIPTIONS,
            push_max_per_address: Self::DEFAULT_PUSH_MAX_PER_ADDRESS,
            offline_after: Self::DEFAULT_OFFLINE_AFTER,
            join_url: None,
        }
    }

    /// Refuses settings that would panic a task or refuse everyone (a zero
    /// interval, timeout or cap), naming the setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let durations = [
            ("poll interval", self.poll_interval),
            ("ping interval", self.ping_interval),
            ("pong timeout", self.pong_timeout),
            ("push subscriptions' life", self.push_expire_after),
            ("master timeout", self.master_timeout),
            ("reconnect minimum", self.reconnect_min),
            ("reconnect maximum", self.reconnect_max),
            ("feed retry maximum", self.feed_retry_max),
            ("write timeout", self.write_timeout),
            ("game poll interval", self.game_poll_interval),
            ("game query timeout", self.game_query_timeout),
            ("game refresh deadline", self.game_refresh_deadline),
            ("header read timeout", self.header_read_timeout),
            ("idle timeout", self.idle_timeout),
            ("bridgeAuth failure window", self.auth_window),
            ("query answer interval", self.query_interval),
            ("offline grace", self.offline_after),
        ];
        for (name, value) in durations {
            if value.is_zero() {
                return Err(ConfigError::Zero(name));
            }
        }
        let counts = [
            ("maximum of WebSocket connections", self.max_connections),
            ("maximum of HTTP connections", self.max_http_connections),
            (
                "maximum of HTTP connections per address",
                self.max_http_per_address,
            ),
            ("maximum of WebSockets per address", self.max_ws_per_address),
            ("game query concurrency", self.game_query_concurrency),
            ("game server cap", self.game_max_servers),
            ("history keys per source", self.history_keys_per_source),
            ("maximum of push subscriptions", self.push_max_subscriptions),
            (
                "maximum of push subscriptions per address",
                self.push_max_per_address,
            ),
            (
                "maximum of bridgeAuth failures",
                self.auth_max_failures as usize,
            ),
            ("API answer rate", self.api_rate_per_sec as usize),
            ("API answer burst", self.api_burst as usize),
        ];
        for (name, value) in counts {
            if value == 0 {
                return Err(ConfigError::Zero(name));
            }
        }
        if self.reconnect_min > self.feed_retry_max {
            return Err(ConfigError::FeedRetryRange);
        }
        if self.history_interval < Duration::from_secs(1)
            || self.history_interval.subsec_nanos() != 0
        {
            return Err(ConfigError::HistoryInterval);
        }
        if self.reconnect_min > self.reconnect_max {
            return Err(ConfigError::ReconnectRange);
        }
        Ok(())
    }
}

// The embedded master's settings: the binary's `--master-*` flags.

/// What the bridge's binary gives the master it runs in-process (without
/// `--master`), as the master binary's flags of the same names do: a ban
/// file, exempt networks and `--require-peer-address`. The bridge itself
/// does not read them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmbeddedMaster {
    /// Banned addresses and networks (`master::bans`); reloaded on SIGHUP.
    pub ban_file: Option<PathBuf>,
    /// Networks without the per-address cap and the message rate, besides
    /// the address the bridge itself connects from.
    pub exempt: Vec<IpNet>,
    /// Discard registrations whose `serverAddress` is not the address they
    /// come from.
    pub require_peer_address: bool,
}

impl EmbeddedMaster {
    /// The embedded master's configuration when it listens on `listen`:
    /// [`master::Config::embedded`] with these settings added.
    pub fn master_config(&self, listen: SocketAddr) -> master::Config {
        let mut config = master::Config::embedded(listen);
        config.exempt.extend(self.exempt.iter().copied());
        config.require_peer_address = self.require_peer_address;
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_zeroes_are_not() {
        let token = AdminToken::new("0123456789abcdef").unwrap();
        let config = Config::new("127.0.0.1:1", token);
        assert!(config.validate().is_ok());
        let mut zero = config.clone();
        zero.poll_interval = Duration::ZERO;
        let err = zero.validate().unwrap_err().to_string();
        assert!(err.contains("poll interval"), "{err}");
        let mut zero = config.clone();
        zero.max_ws_per_address = 0;
        assert!(zero.validate().is_err());
        let mut zero = config.clone();
        zero.api_rate_per_sec = 0;
        let err = zero.validate().unwrap_err().to_string();
        assert!(err.contains("API answer rate"), "{err}");
        let mut short = config.clone();
        short.history_interval = Duration::from_millis(1500);
        let err = short.validate().unwrap_err().to_string();
        assert!(err.contains("history interval"), "{err}");
    }

    #[test]
    fn the_embedded_master_gets_the_operators_settings_besides_its_own() {
        let listen: SocketAddr = "127.0.0.1:51963".parse().unwrap();
        let plain = EmbeddedMaster::default().master_config(listen);
        assert_eq!(plain.exempt, master::Config::embedded(listen).exempt);
        assert!(!plain.require_peer_address);
        let options = EmbeddedMaster {
            ban_file: None,
            exempt: vec!["192.0.2.0/24".parse().unwrap()],
            require_peer_address: true,
        };
        let config = options.master_config(listen);
        assert_eq!(
            config.exempt,
            [
                "127.0.0.1/32".parse::<IpNet>().unwrap(),
                "192.0.2.0/24".parse().unwrap()
            ]
        );
        assert!(config.require_peer_address);
    }
}
