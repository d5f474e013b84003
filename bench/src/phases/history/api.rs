//! The history API and the badges, asked of a real bridge started on the
//! synthetic month's data directory: each request on its own connection
//! (as a page's first fetch), timed from connect to the last byte.
//!
//! The bridge caches each answer until the history changes, so the
//! uncached figures ask what no cache holds: every server history asks
//! another key, once; the lobby's totals (one path) are asked of a bridge
//! sampling every second, once after each sample (its
//! `bridge_history_samples_written_total` moved since the last request).

use std::{
    net::SocketAddr,
    path::Path,
    time::{Duration, Instant},
};

use hdrhistogram::Histogram;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use super::synth::lobby;
use lobby_testkit::metrics;

use crate::{
    error::{within, Error, Result},
    phases::Env,
    procs::{self, BridgeLaunch},
    report::{count, histogram, ms, q, record, times, Row, Verdict},
};

/// One answer: status, head (lower-case) and body.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

/// A GET on a new connection (`Connection: close`), read to the end.
async fn get(addr: SocketAddr, path: &str, extra: &str) -> Result<Answer> {
    within(format!("GET {path}"), async {
        let mut conn = TcpStream::connect(addr).await?;
        conn.set_nodelay(true)?;
        conn.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
        let mut raw = Vec::with_capacity(64 * 1024);
        conn.read_to_end(&mut raw).await?;
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| Error::Unexpected(format!("GET {path}: no HTTP answer")))?;
        let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok(Answer {
            status,
            head,
            body: raw[split + 4..].to_vec(),
        })
    })
    .await
}

/// `n` timed GETs of `path(i)`, each answered `status`; their latencies.
async fn timed(
    addr: SocketAddr,
    n: usize,
    status: u16,
    extra: &str,
    path: impl Fn(usize) -> String,
) -> Result<Histogram<u64>> {
    let mut h = histogram();
    for i in 0..n {
        let p = path(i);
        let t = Instant::now();
        let a = get(addr, &p, extra).await?;
        record(&mut h, t.elapsed());
        if a.status != status {
            return Err(Error::Unexpected(format!(
                "GET {p}: {} (expected {status})",
                a.status
            )));
        }
    }
    Ok(h)
}

fn key_hex(key: u64) -> String {
    format!("{key:016x}")
}

/// The API and badge figures.
pub(super) async fn run(env: &Env, data: &Path, end_ms: i64) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let servers = lobby(s.history_servers);
    let n = s.history_requests.min(servers.len());
    let opts = BridgeLaunch {
        data_dir: Some(data.to_owned()),
        ..procs::bridge(&env.bins)
    };
    let opened = Instant::now();
    let (bridge, addr, _) = procs::start_bridge_embedded(&env.bins, &opts).await?;
    let open_time = opened.elapsed();

    // Baseline: a 304 revalidation of /api/servers, and /healthz.
    let list = get(addr, "/api/servers", "").await?;
    let etag = list
        .head
        .lines()
        .find_map(|l| l.strip_prefix("etag:"))
        .map(|e| e.trim().to_owned())
        .ok_or_else(|| Error::Unexpected("/api/servers without an ETag".into()))?;
    let inm = format!("If-None-Match: {etag}\r\n");
    let revalidated = timed(addr, n, 304, &inm, |_| "/api/servers".into()).await?;
    let health = timed(addr, n, 200, "", |_| "/healthz".into()).await?;

    // A server's month, for keys no cache holds: each key once. Servers
    // are taken spread over the lobby (stride coprime with its size).
    // 7919 is prime: coprime with any lobby size it does not divide.
    let stride = if servers.len().is_multiple_of(7919) {
        1
    } else {
        7919
    };
    let pick = |i: usize| servers[(i * stride + 1) % servers.len()].key;
    let first = get(
        addr,
        &format!("/api/servers/{}/history?range=30d", key_hex(pick(0))),
        "",
    )
    .await?;
    let v: serde_json::Value = serde_json::from_slice(&first.body)?;
    let points = v["points"].as_array().map_or(0, Vec::len);
    // A 30-day range holds at most 30 days of hourly points.
    let days = s.history_days.min(30);
    if first.status != 200 || points < (days as usize * 24) / 2 {
        return Err(Error::Unexpected(format!(
            "30d history of a synthetic server: {} with {points} points",
            first.status
        )));
    }
    let uncached = timed(addr, n.saturating_sub(1), 200, "", |i| {
        format!("/api/servers/{}/history?range=30d", key_hex(pick(i + 1)))
    })
    .await?;
    let again = format!("/api/servers/{}/history?range=30d", key_hex(pick(1)));
    let cached = timed(addr, n, 200, "", |_| again.clone()).await?;
    let lobby_cached = timed(addr, n, 200, "", |_| "/api/history?range=24h".into()).await?;

    // A badge with a long hostile name (every thousandth synthetic server).
    let hostile = servers[0].key;
    let badge_path = format!("/badge/{}.svg", key_hex(hostile));
    let badge = get(addr, &badge_path, "").await?;
    let svg = String::from_utf8_lossy(&badge.body).into_owned();
    if badge.status != 200 || !svg.starts_with("<svg") || !svg.contains("&lt;&amp;&quot;") {
        return Err(Error::Unexpected(format!(
            "badge of the hostile name: {} {svg:.200}",
            badge.status
        )));
    }
    let badges = timed(addr, n, 200, "", |_| badge_path.clone()).await?;
    let lobby_badge = get(addr, "/badge.svg", "").await?;
    bridge.stop().await;

    // The lobby's totals uncached: a bridge sampling every second, asked
    // once after each of its samples.
    let opts = BridgeLaunch {
        data_dir: Some(data.to_owned()),
        history_interval: Some(Duration::from_secs(1)),
        ..procs::bridge(&env.bins)
    };
    let (bridge, addr, _) = procs::start_bridge_embedded(&env.bins, &opts).await?;
    let rounds = (n / 100).clamp(2, 20);
    let mut lobby_uncached = histogram();
    let mut lobby_points = 0;
    let mut seen = metrics::scrape(addr, "bridge_history_samples_written_total")
        .await
        .map_err(Error::Unexpected)?;
    for _ in 0..rounds {
        seen = metrics::try_until_metric(addr, "bridge_history_samples_written_total", |now| {
            now > seen
        })
        .await?;
        let t = Instant::now();
        let a = get(addr, "/api/history?range=24h", "").await?;
        record(&mut lobby_uncached, t.elapsed());
        let v: serde_json::Value = serde_json::from_slice(&a.body)?;
        lobby_points = v["points"].as_array().map_or(0, Vec::len);
    }
    bridge.stop().await;
    let _ = end_ms;

    let base_p50 = revalidated.value_at_quantile(0.5) as f64;
    let p50 = uncached.value_at_quantile(0.5);
    let lobby_p50 = lobby_uncached.value_at_quantile(0.5);
    let badge_p50 = badges.value_at_quantile(0.5);
    let health_p50 = health.value_at_quantile(0.5) as f64;
    Ok(vec![
        Row::new(
            format!(
                "GET /api/servers/{{key}}/history?range=30d, uncached: {} other keys once each, {} servers with {days} days of history ({points} points, {} KB)",
                count(uncached.len()),
                count(s.history_servers as u64),
                first.body.len() / 1000
            ),
            format!("p50 {} p99 {}", q(&uncached, 0.5), q(&uncached, 0.99)),
            format!("/api/servers 304: p50 {}", q(&revalidated, 0.5)),
            times(p50 as f64, base_p50),
            "p50 ≤ 5 ms",
            Verdict::of(p50 <= 5_000),
        ),
        Row::new(
            "GET /api/servers/{key}/history?range=30d, cached (one key again)",
            format!("p50 {} p99 {}", q(&cached, 0.5), q(&cached, 0.99)),
            format!("/api/servers 304: p50 {}", q(&revalidated, 0.5)),
            times(cached.value_at_quantile(0.5) as f64, base_p50),
            "-",
            Verdict::Info,
        ),
        Row::new(
            format!(
                "GET /api/history?range=24h (lobby totals), uncached: once after each of {} samples of a bridge sampling every 1 s ({lobby_points} points)",
                lobby_uncached.len()
            ),
            format!(
                "p50 {} p99 {}; cached p50 {}",
                q(&lobby_uncached, 0.5),
                q(&lobby_uncached, 0.99),
                q(&lobby_cached, 0.5)
            ),
            format!("/api/servers 304: p50 {}", q(&revalidated, 0.5)),
            times(lobby_p50 as f64, base_p50),
            "p50 ≤ 5 ms",
            Verdict::of(lobby_p50 <= 5_000),
        ),
        Row::new(
            "GET /badge/{key}.svg: size with a 100-character hostile name",
            format!("{} bytes", badge.body.len()),
            format!("/badge.svg (the lobby's): {} bytes", lobby_badge.body.len()),
            "-",
            "≤ 4 KB",
            Verdict::of(badge.body.len() <= 4096),
        ),
        Row::new(
            format!("GET /badge/{{key}}.svg from the cache ({} requests)", badges.len()),
            format!("p50 {} p99 {}", q(&badges, 0.5), q(&badges, 0.99)),
            format!("/healthz: p50 {}", q(&health, 0.5)),
            times(badge_p50 as f64, health_p50),
            "p50 ≤ 1 ms",
            Verdict::of(badge_p50 <= 1_000),
        ),
        Row::new(
            "bridge start on that data directory (opening and checking the database)",
            ms(open_time.as_micros() as u64),
            "-",
            "-",
            "-",
            Verdict::Info,
        ),
    ])
}
