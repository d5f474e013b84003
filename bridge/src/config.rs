//! The bridge's tunables, with the defaults the binary uses.

use std::{path::PathBuf, time::Duration};

use crate::token::AdminToken;

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

/// Everything a [`crate::Bridge`] needs; tests shorten the intervals.
#[derive(Debug, Clone)]
pub struct Config {
    /// The master to relay to (`host:port`); the bridge never connects anywhere else.
    pub master: String,
    /// The built front end; missing files fall back to its `index.html`.
    pub static_dir: PathBuf,
    /// What `bridgeAuth` must carry to make a connection an admin.
    pub admin_token: AdminToken,
    /// Allowed `Origin`s of WebSocket upgrades. Empty: the request's own
    /// host, plus `http://localhost:*` / `http://127.0.0.1:*` when
    /// `loopback_origins` is set.
    pub allowed_origins: Vec<String>,
    /// Whether local development origins are allowed by default; the binary
    /// sets it when listening on a loopback address.
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
}

impl Config {
    /// A configuration with the defaults of the binary.
    pub fn new(master: impl Into<String>, admin_token: AdminToken) -> Self {
        Self {
            master: master.into(),
            static_dir: PathBuf::from("dist"),
            admin_token,
            allowed_origins: Vec::new(),
            loopback_origins: true,
            max_connections: 10_000,
            poll_interval: Duration::from_secs(1),
            rate_per_sec: 20,
            rate_burst: 40,
            flood_close_after: 40,
            hide_addresses: false,
            ping_interval: Duration::from_secs(30),
            pong_timeout: Duration::from_secs(60),
            master_timeout: Duration::from_secs(5),
            reconnect_min: Duration::from_millis(100),
            reconnect_max: Duration::from_millis(500),
            write_timeout: Duration::from_secs(10),
            close_wait: Duration::from_secs(1),
            shutdown_grace: Duration::from_secs(3),
            a2s: Vec::new(),
            gameagent_masters: Vec::new(),
            game_poll_interval: Duration::from_secs(10),
            game_query_timeout: Duration::from_secs(1),
            game_query_retries: 2,
            game_query_concurrency: 64,
        }
    }
}
