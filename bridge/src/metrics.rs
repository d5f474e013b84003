//! Counters for `/metrics`, and the one writer of its text ([`family`]),
//! which every part of the bridge that has counters (these, the history's,
//! the events', the notifications') writes its families through.
//!
//! Written here rather than with `prometheus-client` 0.24 (the Prometheus
//! project's crate), tried against it: its encoder writes OpenMetrics, a
//! counter's `# HELP` and `# TYPE` without its `_total`, a period added
//! to every help that lacks one, a closing `# EOF`, and it has no summary
//! (which `bridge_history_write_seconds` is). Taking it would change what
//! every operator's dashboards and alerts read, for a format the bridge
//! needs about 30 lines of. Speed decides nothing: 55 families (about
//! 11 KB) took 12 µs per scrape with the crate and 15 to 17 µs with this
//! writer, formatting each name anew (release, one core, 2026-12-03). The
//! counters are plain relaxed atomics either way (the crate's are too).

use std::{
    fmt::{Display, Write},
    sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed},
};

use protocol::bridge::ErrorCode;

const CODES: [ErrorCode; 6] = ErrorCode::ALL;

/// What a family counts (its `# TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only ever grows (its name ends in `_total`).
    Counter,
    /// Goes up and down.
    Gauge,
    /// A sum and a count (samples `_sum` and `_count`).
    Summary,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Summary => "summary",
        }
    }
}

/// Appends one family of the Prometheus text exposition (format 0.0.4)
/// to `out`: its `# HELP` and `# TYPE` lines, then one line per sample,
/// each the family's name followed by the sample's `suffix` (labels such
/// as `{code="forbidden"}`, `_sum`, or nothing) and its value.
pub fn family<S: Display, V: Display>(
    out: &mut String,
    name: &str,
    kind: Kind,
    help: &str,
    samples: impl IntoIterator<Item = (S, V)>,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {}", kind.as_str());
    for (suffix, value) in samples {
        let _ = writeln!(out, "{name}{suffix} {value}");
    }
}

/// Shared by every connection; plain relaxed atomics (no ordering needed).
#[derive(Debug, Default)]
pub struct Metrics {
    /// Open WebSockets that have not authenticated.
    pub viewers: AtomicI64,
    /// Open WebSockets that sent the admin token.
    pub admins: AtomicI64,
    /// Text and binary frames received from browsers.
    pub frames_in: AtomicU64,
    /// Text messages sent to browsers.
    pub frames_out: AtomicU64,
    refusals: [AtomicU64; 6],
    /// Upgrades refused for a foreign (or not ASCII) `Origin`; logged at
    /// most once per 10 s.
    pub refused_origin: AtomicU64,
    /// Upgrades refused at the connection limit.
    pub refused_full: AtomicU64,
    /// WebSocket upgrades refused at the per-address cap.
    pub refused_ws_address: AtomicU64,
    /// Requests to `/ws` that were not a WebSocket upgrade (HTTP 400).
    pub refused_not_websocket: AtomicU64,
    /// WebSockets closed with 1008 for a message flood (continuation
    /// frames included); logged at most once per 10 s.
    pub closed_flood: AtomicU64,
    /// WebSockets closed with 1009 for a frame or message too big.
    pub closed_too_big: AtomicU64,
    /// WebSockets closed for sending nothing, not even a pong.
    pub closed_no_pong: AtomicU64,
    /// WebSockets dropped because the browser did not read.
    pub closed_not_reading: AtomicU64,
    /// Open client TCP connections (HTTP and WebSocket).
    pub http_connections: AtomicI64,
    /// Connections closed at accept: their address had all its slots.
    pub http_refused_address: AtomicU64,
    /// Connections closed at accept: the bridge had all its slots.
    pub http_refused_full: AtomicU64,
    /// `bridgeAuth` with a wrong token.
    pub auth_failures: AtomicU64,
    /// Queries the bridge sent to the master (shared poller and admin links).
    pub master_queries: AtomicU64,
    /// 1 while the shared upstream reaches the master.
    pub master_up: AtomicI64,
    /// Master lists dropped because a list asked for later was published
    /// already (replies on the poller's and admins' connections race).
    pub stale_lists_dropped: AtomicU64,
    /// `/api/` requests answered `429`: their address had no token left.
    pub api_limited: AtomicU64,
    /// History and badge answers computed (not taken from the cache): the
    /// costly part of `/api/`, done only for requests that paid.
    pub api_computed: AtomicU64,
    /// Cards drawn (a PNG rendered): once per face a card shows, however
    /// often it is asked for.
    pub cards_drawn: AtomicU64,
    /// WebSocket answers (a whole list or a catch-up) that waited for their
    /// socket's query interval.
    pub held_interval: AtomicU64,
    /// WebSocket answers that waited for their address's next token.
    pub held_address: AtomicU64,
    /// 1 while the list comes from the master's change feed (`--master-feed`)
    /// rather than from polling.
    pub master_feed_up: AtomicI64,
    /// Snapshots the master's feed sent (a subscribe, a new epoch, or a
    /// bridge that fell behind the master's ring).
    pub master_feed_snapshots: AtomicU64,
    /// Deltas with a change that the master's feed sent (heartbeats not counted).
    pub master_feed_deltas: AtomicU64,
    /// Heartbeats (and deltas that changed nothing) the master's feed sent:
    /// the feed is alive while nothing changes.
    pub master_feed_quiet: AtomicU64,
}

impl Metrics {
    /// Counts one refusal answered with `code`.
    pub fn refused(&self, code: ErrorCode) {
        if let Some(i) = CODES.iter().position(|c| *c == code) {
            self.refusals[i].fetch_add(1, Relaxed);
        }
    }

    /// How many frames were refused with `code`.
    pub fn refusals(&self, code: ErrorCode) -> u64 {
        CODES
            .iter()
            .position(|c| *c == code)
            .map_or(0, |i| self.refusals[i].load(Relaxed))
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(2048);
        let mut metric = |name: &str, kind: Kind, help: &str, samples: &[(&str, i64)]| {
            family(&mut out, name, kind, help, samples.iter().copied());
        };
        let u = |a: &AtomicU64| i64::try_from(a.load(Relaxed)).unwrap_or(i64::MAX);
        metric(
            "bridge_connections",
            Kind::Gauge,
            "Open WebSocket connections by role.",
            &[
                ("{role=\"viewer\"}", self.viewers.load(Relaxed)),
                ("{role=\"admin\"}", self.admins.load(Relaxed)),
            ],
        );
        metric(
            "bridge_frames_in_total",
            Kind::Counter,
            "WebSocket frames received from browsers.",
            &[("", u(&self.frames_in))],
        );
        metric(
            "bridge_frames_out_total",
            Kind::Counter,
            "WebSocket messages sent to browsers.",
            &[("", u(&self.frames_out))],
        );
        let labels: Vec<String> = CODES
            .iter()
            .map(|c| format!("{{code=\"{}\"}}", c.as_str()))
            .collect();
        let samples: Vec<(&str, i64)> = labels
            .iter()
            .zip(&self.refusals)
            .map(|(l, n)| (l.as_str(), u(n)))
            .collect();
        metric(
            "bridge_refusals_total",
            Kind::Counter,
            "Frames refused with bridgeError, by code.",
            &samples,
        );
        metric(
            "bridge_upgrades_refused_total",
            Kind::Counter,
            "WebSocket upgrades refused before the handshake, by HTTP status and reason.",
            &[
                (
                    "{status=\"403\",reason=\"origin\"}",
                    u(&self.refused_origin),
                ),
                ("{status=\"503\",reason=\"full\"}", u(&self.refused_full)),
                (
                    "{status=\"503\",reason=\"address\"}",
                    u(&self.refused_ws_address),
                ),
                (
                    "{status=\"400\",reason=\"not-websocket\"}",
                    u(&self.refused_not_websocket),
                ),
            ],
        );
        metric(
            "bridge_websockets_closed_total",
            Kind::Counter,
            "WebSockets the bridge closed for what the browser did, by reason.",
            &[
                ("{reason=\"flood\"}", u(&self.closed_flood)),
                ("{reason=\"too-big\"}", u(&self.closed_too_big)),
                ("{reason=\"no-pong\"}", u(&self.closed_no_pong)),
                ("{reason=\"not-reading\"}", u(&self.closed_not_reading)),
            ],
        );
        metric(
            "bridge_http_connections",
            Kind::Gauge,
            "Open client TCP connections, WebSockets included.",
            &[("", self.http_connections.load(Relaxed))],
        );
        metric(
            "bridge_http_connections_refused_total",
            Kind::Counter,
            "Client connections closed right after accept, by the cap reached.",
            &[
                ("{cap=\"address\"}", u(&self.http_refused_address)),
                ("{cap=\"total\"}", u(&self.http_refused_full)),
            ],
        );
        metric(
            "bridge_auth_failures_total",
            Kind::Counter,
            "bridgeAuth attempts with a wrong token.",
            &[("", u(&self.auth_failures))],
        );
        metric(
            "bridge_master_queries_total",
            Kind::Counter,
            "msQueryGameServers sent to the master.",
            &[("", u(&self.master_queries))],
        );
        metric(
            "bridge_master_up",
            Kind::Gauge,
            "1 while the master is reachable.",
            &[("", self.master_up.load(Relaxed))],
        );
        metric(
            "bridge_stale_lists_dropped_total",
            Kind::Counter,
            "Master lists dropped as older than the list already published.",
            &[("", u(&self.stale_lists_dropped))],
        );
        metric(
            "bridge_api_limited_total",
            Kind::Counter,
            "Requests under /api/ answered 429: the client address had no token left.",
            &[("", u(&self.api_limited))],
        );
        metric(
            "bridge_api_answers_computed_total",
            Kind::Counter,
            "History and badge answers computed rather than taken from the cache.",
            &[("", u(&self.api_computed))],
        );
        metric(
            "bridge_cards_drawn_total",
            Kind::Counter,
            "Cards drawn as PNG: once per face a card shows (cached after).",
            &[("", u(&self.cards_drawn))],
        );
        metric(
            "bridge_answers_held_total",
            Kind::Counter,
            "WebSocket list answers that had to wait, by what they waited for.",
            &[
                ("{for=\"interval\"}", u(&self.held_interval)),
                ("{for=\"address\"}", u(&self.held_address)),
            ],
        );
        metric(
            "bridge_master_feed_up",
            Kind::Gauge,
            "1 while the list comes from the master's change feed instead of polling.",
            &[("", self.master_feed_up.load(Relaxed))],
        );
        metric(
            "bridge_master_feed_messages_total",
            Kind::Counter,
            "Messages received from the master's change feed, by kind: a snapshot, a delta \
             that changed the list, or quiet (a heartbeat, or a delta that changed nothing).",
            &[
                ("{kind=\"snapshot\"}", u(&self.master_feed_snapshots)),
                ("{kind=\"delta\"}", u(&self.master_feed_deltas)),
                ("{kind=\"quiet\"}", u(&self.master_feed_quiet)),
            ],
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_family() {
        let m = Metrics::default();
        m.refused(ErrorCode::Forbidden);
        m.refused(ErrorCode::Forbidden);
        assert_eq!(m.refusals(ErrorCode::Forbidden), 2);
        let text = m.render();
        assert!(text.contains("bridge_refusals_total{code=\"forbidden\"} 2\n"));
        assert!(text.contains("bridge_connections{role=\"viewer\"} 0\n"));
        assert!(text.contains("# TYPE bridge_master_up gauge\n"));
        assert!(text.contains("bridge_stale_lists_dropped_total 0\n"));
        m.closed_flood.fetch_add(3, Relaxed);
        let text = m.render();
        assert!(text.contains("bridge_websockets_closed_total{reason=\"flood\"} 3\n"));
        assert!(text.contains(
            "bridge_upgrades_refused_total{status=\"400\",reason=\"not-websocket\"} 0\n"
        ));
        assert!(text.contains("bridge_api_limited_total 0\n"));
        assert!(text.contains("bridge_api_answers_computed_total 0\n"));
        assert!(text.contains("bridge_answers_held_total{for=\"address\"} 0\n"));
        assert!(text.contains("bridge_master_feed_up 0\n"));
        assert!(text.contains("bridge_master_feed_messages_total{kind=\"delta\"} 0\n"));
    }
}
