//! Web Push (`docs/protocol.md` §4.10): many browsers' subscriptions
//! watching the same servers, and one lobby opening at a time. Measured
//! from the change (sent to the master) to the push service taking each
//! push: the first push's latency, the time until every subscription's
//! push arrived, and the bridge's resident memory grown by holding the
//! subscriptions and sending; beside the same run with a small number of
//! subscriptions (the baseline). The push service runs on loopback (so
//! the bridge runs with `--push-allow-insecure`): it takes every `POST`
//! on kept-alive connections and answers 201, without decrypting (the
//! bridge's tests check what is sent).
//!
//! Then the measured size on several bridges sharing one PostgreSQL
//! database behind one master (`shared_db`): the subscriptions made
//! through each bridge in turn, any bridge sending; the time until every
//! push arrived beside the one bridge's, how many each bridge sent (its
//! `bridge_push_sent_total{result="delivered"}`), and the delivery rows
//! left in the database once every push is settled (an ended push's row
//! is deleted).

use std::{net::SocketAddr, time::Duration};

use hdrhistogram::Histogram;
use serde_json::{json, Value};
use tokio::{io::AsyncWriteExt, net::TcpStream, time::Instant};

use lobby_testkit::{http, try_until};

use crate::{
    direct,
    error::{within, within_for, Error, Result},
    phases::{
        shared_db::{self, Shared},
        webhooks::{read_message, receiver, seen, stats},
        Env,
    },
    procs::{self, BridgeLaunch},
    report::{count, histogram, q, record, times, Row, Verdict},
    ws,
};

/// Every push of one event sent within this.
const ALL_TARGET: Duration = Duration::from_secs(30);
/// The first push leaves within this of the change.
const FIRST_TARGET: Duration = Duration::from_secs(2);
/// The bridge's memory grows by at most this for all subscriptions.
const RSS_TARGET_KIB: u64 = 50 * 1024;
/// Players of the measured servers: a marker per change.
const MARKER_BASE: u64 = 40_000;
/// A browser's public key and auth secret (RFC 8291's example): every
/// subscription encrypts with them; endpoints tell them apart.
const P256DH: &str =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
const AUTH: &str = "BTBZMqHH6r4Tts7J_aSIgg";
/// Connections the subscriptions are made over (rounded up to a multiple
/// of the bridges).
const SUBSCRIBERS: usize = 4;
/// The shared bridges' database.
const DB: &str = "lobby_push";
/// A push delivered, on one bridge's `/metrics`.
const DELIVERED: &str = "bridge_push_sent_total{result=\"delivered\"}";

const SHARED_FIGURE: &str = "web push on bridges sharing one PostgreSQL database";

/// What one run gave.
struct Figures {
    subscriptions: usize,
    /// From each change to its first push.
    first: Histogram<u64>,
    /// From each change to its last push (all subscriptions served).
    all: Histogram<u64>,
    /// The bridge's RSS growth from before the subscriptions to after the
    /// last round.
    rss_kib: u64,
}

/// Runs the phase: the baseline, then the measured size.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let base = measure(env, s.push_baseline).await?;
    let big = measure(env, s.push_subscriptions).await?;
    let p95 = |h: &Histogram<u64>| Duration::from_micros(h.value_at_quantile(0.95));
    let n = big.subscriptions;
    let shared = match shared_db::unavailable() {
        Some(why) => vec![Row::skipped(SHARED_FIGURE, why)],
        None => shared_rows(&measure_shared(env, n).await?, &big),
    };
    let mut rows = vec![
        Row::new(
            format!("web push: a lobby opening to its first push ({n} subscriptions), p50 / p95"),
            format!("{} / {}", q(&big.first, 0.5), q(&big.first, 0.95)),
            format!(
                "{} / {} with {}",
                q(&base.first, 0.5),
                q(&base.first, 0.95),
                base.subscriptions
            ),
            "-",
            "p95 ≤ 2 s",
            Verdict::of(p95(&big.first) <= FIRST_TARGET),
        ),
        Row::new(
            format!("web push: a lobby opening to all {n} pushes sent, p50 / max"),
            format!("{} / {}", q(&big.all, 0.5), q(&big.all, 1.0)),
            format!(
                "{} / {} with {}",
                q(&base.all, 0.5),
                q(&base.all, 1.0),
                base.subscriptions
            ),
            "-",
            "≤ 30 s",
            Verdict::of(Duration::from_micros(big.all.max()) <= ALL_TARGET),
        ),
        Row::new(
            format!("web push: bridge RSS grown by {n} subscriptions and their pushes"),
            format!("{:.1} MiB", big.rss_kib as f64 / 1024.0),
            format!(
                "{:.1} MiB with {}",
                base.rss_kib as f64 / 1024.0,
                base.subscriptions
            ),
            "-",
            "≤ 50 MB",
            Verdict::of(big.rss_kib <= RSS_TARGET_KIB),
        ),
    ];
    rows.extend(shared);
    Ok(rows)
}

/// What the run on shared bridges gave beyond [`Figures`].
struct SharedFigures {
    figures: Figures,
    /// Pushes delivered by each bridge.
    sent: Vec<f64>,
    /// Delivery rows the bridges wrote.
    written: f64,
    /// Delivery rows in the database after every push was settled.
    left: i64,
}

fn shared_rows(shared: &SharedFigures, one: &Figures) -> Vec<Row> {
    let many = &shared.figures;
    let (n, bridges) = (many.subscriptions, shared.sent.len());
    let max = |h: &Histogram<u64>| h.max() as f64;
    let total: f64 = shared.sent.iter().sum();
    let fair = total / bridges.max(1) as f64;
    let least = shared.sent.iter().copied().fold(f64::INFINITY, f64::min);
    vec![
        Row::new(
            format!(
                "{SHARED_FIGURE} ({bridges} bridges behind one master, --master-feed; {n} \
                 subscriptions made through each in turn): a lobby opening to all pushes sent, \
                 p50 / max (first push p50 / p95)"
            ),
            format!(
                "{} / {} ({} / {})",
                q(&many.all, 0.5),
                q(&many.all, 1.0),
                q(&many.first, 0.5),
                q(&many.first, 0.95)
            ),
            format!(
                "{} / {} ({} / {}) with one bridge (embedded master, SQLite)",
                q(&one.all, 0.5),
                q(&one.all, 1.0),
                q(&one.first, 0.5),
                q(&one.first, 0.95)
            ),
            times(max(&many.all), max(&one.all).max(1.0)),
            "≤ 30 s",
            Verdict::of(Duration::from_micros(many.all.max()) <= ALL_TARGET),
        ),
        Row::new(
            format!(
                "{SHARED_FIGURE}: pushes sent by each bridge ({} rounds of {n})",
                many.all.len()
            ),
            shared_db::split(&shared.sent),
            format!("{fair:.0} each if even"),
            times(least, fair),
            "every bridge sends ≥ 10 % of an even share",
            Verdict::of(bridges > 0 && least >= fair / 10.0),
        ),
        Row::new(
            format!("{SHARED_FIGURE}: delivery rows in the database once every push is settled"),
            count(u64::try_from(shared.left).unwrap_or(0)),
            format!("{} written", count(shared.written as u64)),
            times(shared.left as f64, shared.written),
            "ended pushes pruned: ≤ 1 % of those written",
            Verdict::of(shared.left >= 0 && shared.left as f64 <= shared.written / 100.0),
        ),
    ]
}

/// One bridge, `n` subscriptions each watching every measured server,
/// and one lobby opening per server.
async fn measure(env: &Env, n: usize) -> Result<Figures> {
    let rounds = env.sizes.push_rounds;
    let opts = BridgeLaunch {
        rate_limit: procs::UNLIMITED,
        push_subscriptions: Some(n),
        ..procs::bridge(&env.bins)
    };
    let (bridge, baddr, maddr) = procs::start_bridge_embedded(&env.bins, &opts).await?;
    let mut servers = direct::register_servers(maddr, rounds, "Push", 0).await?;
    let keys = closed(baddr, &mut servers).await?;
    // The push service: takes every push on kept-alive connections.
    let (service, mut arrivals) =
        receiver(b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n").await?;
    let service = format!("http://{service}/push/");
    let rss_before = bridge.rss_kib()?;
    subscribe(&[baddr], &service, n, &keys).await?;
    let (first, all) = open_each(&mut servers, &mut arrivals, n).await?;
    let rss_after = bridge.rss_kib()?;
    drop(servers);
    bridge.stop().await;
    Ok(Figures {
        subscriptions: n,
        first,
        all,
        rss_kib: rss_after.saturating_sub(rss_before),
    })
}

/// The same on [`Sizes::notify_bridges`](crate::Sizes) bridges sharing
/// one PostgreSQL database.
async fn measure_shared(env: &Env, n: usize) -> Result<SharedFigures> {
    let rounds = env.sizes.push_rounds;
    let opts = BridgeLaunch {
        rate_limit: procs::UNLIMITED,
        push_subscriptions: Some(n),
        ..procs::bridge(&env.bins)
    };
    let bridges = env.sizes.notify_bridges.max(2);
    let shared = Shared::start(env, DB, bridges, rounds + 100, opts).await?;
    let mut servers = direct::register_servers(shared.master_addr, rounds, "Push", 0).await?;
    let addrs = shared.addrs();
    // Each bridge must have listed the keys before it takes a watch of
    // them: the viewer on the last bridge started, then every bridge's
    // list is asked for them (the same keys on each: every bridge follows
    // the feed, see `shared_db`).
    let keys = closed(addrs[addrs.len() - 1], &mut servers).await?;
    for addr in &addrs {
        listed(*addr, &keys).await?;
    }
    let (service, mut arrivals) =
        receiver(b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n").await?;
    let service = format!("http://{service}/push/");
    subscribe(&addrs, &service, n, &keys).await?;
    // Every bridge has read every subscription from the database.
    shared
        .all_say("bridge_push_subscriptions", n as f64)
        .await?;
    let (first, all) = open_each(&mut servers, &mut arrivals, n).await?;
    // Every push settled (its row deleted) before the rows are counted.
    let total = (n * rounds) as f64;
    shared.sum_reaches(DELIVERED, total).await?;
    let sent = shared.each(DELIVERED).await?;
    let written = shared
        .each("bridge_notify_written_total")
        .await?
        .iter()
        .sum();
    drop(servers);
    let left = shared
        .stop_and_count("SELECT count(*) FROM notify_deliveries")
        .await?;
    Ok(SharedFigures {
        figures: Figures {
            subscriptions: n,
            first,
            all,
            rss_kib: 0,
        },
        sent,
        written,
        left,
    })
}

/// Every server's lobby closed (no event), seen by a viewer on `bridge`;
/// the servers' keys.
async fn closed(bridge: SocketAddr, servers: &mut [direct::Conn]) -> Result<Vec<String>> {
    let mut viewer = ws::connect(&ws::url(bridge)).await?;
    ws::send(
        &mut viewer,
        r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#,
    )
    .await?;
    let keys = keys_of(&mut viewer, servers.len()).await?;
    for (i, game) in servers.iter_mut().enumerate() {
        let marker = MARKER_BASE + 2 * i as u64;
        direct::send(game, &stats(marker, false)).await?;
        seen(&mut viewer, marker).await?;
    }
    Ok(keys)
}

/// Waits until `bridge`'s `/api/servers` lists every one of `keys`.
async fn listed(bridge: SocketAddr, keys: &[String]) -> Result<()> {
    let what = format!("the keys listed on the bridge at {bridge}");
    Ok(try_until(&what, || async {
        let list = http::get_ok(bridge, "/api/servers", "")
            .await
            .map_err(Error::Unexpected)?
            .text();
        match keys.iter().filter(|k| !list.contains(k.as_str())).count() {
            0 => Ok(()),
            missing => Err(Error::Unexpected(format!("{missing} keys not listed"))),
        }
    })
    .await?)
}

/// One lobby opening per server, each waited for until all `n` pushes
/// arrived: from each change to its first push, and to its last.
async fn open_each(
    servers: &mut [direct::Conn],
    arrivals: &mut tokio::sync::mpsc::UnboundedReceiver<Instant>,
    n: usize,
) -> Result<(Histogram<u64>, Histogram<u64>)> {
    let (mut first, mut all) = (histogram(), histogram());
    for (i, game) in servers.iter_mut().enumerate() {
        let marker = MARKER_BASE + 2 * i as u64 + 1;
        let t0 = Instant::now();
        direct::send(game, &stats(marker, true)).await?;
        let mut got = 0;
        let mut first_at = None;
        let mut last_at = t0;
        // A full run sends 10,000 pushes per event.
        within_for(Duration::from_secs(120), "every push of one event", async {
            while got < n {
                let at = arrivals
                    .recv()
                    .await
                    .ok_or_else(|| Error::Unexpected("the push service stopped".into()))?;
                first_at.get_or_insert(at);
                last_at = at;
                got += 1;
            }
            Ok(())
        })
        .await?;
        record(
            &mut first,
            first_at.unwrap_or(t0).saturating_duration_since(t0),
        );
        record(&mut all, last_at.saturating_duration_since(t0));
    }
    Ok((first, all))
}

/// The keys of the `n` servers named `Push…`, from the viewer's snapshot
/// and the deltas after it (the snapshot may come before every server is
/// listed).
async fn keys_of(viewer: &mut ws::Ws, n: usize) -> Result<Vec<String>> {
    within("the servers' keys", async {
        let mut keys: Vec<String> = Vec::new();
        loop {
            let text = ws::next_text(viewer).await?;
            let v: Value = serde_json::from_str(text.as_str())?;
            let content = &v["content"];
            let listed = [&content["servers"], &content["upsert"]];
            for entry in listed.into_iter().filter_map(Value::as_array).flatten() {
                if !entry["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("Push"))
                {
                    continue;
                }
                if let Some(key) = entry["key"].as_str() {
                    if !keys.iter().any(|k| k == key) {
                        keys.push(key.to_owned());
                    }
                }
            }
            if keys.len() >= n {
                return Ok(keys);
            }
        }
    })
    .await
}

/// `n` subscriptions (endpoints `{service}{i}`), each watching `keys`
/// for `lobby-opened`, made over [`SUBSCRIBERS`] (or the next multiple of
/// the bridges) kept-alive connections: subscription `i` through
/// `bridges[i % bridges.len()]`.
async fn subscribe(bridges: &[SocketAddr], service: &str, n: usize, keys: &[String]) -> Result<()> {
    let watches: Vec<Value> = keys
        .iter()
        .map(|k| json!({"key": k, "events": ["lobby-opened"]}))
        .collect();
    let mut tasks = Vec::new();
    let conns = SUBSCRIBERS.div_ceil(bridges.len().max(1)) * bridges.len();
    for c in 0..conns {
        let (service, watches) = (service.to_owned(), watches.clone());
        let bridge = bridges[c % bridges.len()];
        tasks.push(tokio::spawn(async move {
            let mut conn = TcpStream::connect(bridge).await?;
            let mut buf = Vec::new();
            for i in (c..n).step_by(conns) {
                let body = json!({"subscription": {"endpoint": format!("{service}{i}"),
                    "keys": {"p256dh": P256DH, "auth": AUTH}}, "watches": watches})
                .to_string();
                let request = format!(
                    "PUT /api/push/subscription HTTP/1.1\r\nHost: {bridge}\r\n\
                     Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                conn.write_all(request.as_bytes()).await?;
                let (head, _) = read_message(&mut conn, &mut buf).await?;
                if !head.starts_with("HTTP/1.1 201") {
                    return Err(Error::Unexpected(format!(
                        "subscribing: {}",
                        head.lines().next().unwrap_or_default()
                    )));
                }
            }
            Ok::<_, Error>(())
        }));
    }
    // A full run makes 10,000 subscriptions.
    within_for(Duration::from_secs(600), "the subscriptions", async {
        for t in tasks {
            t.await
                .map_err(|e| Error::Unexpected(format!("a subscriber failed: {e}")))??;
        }
        Ok(())
    })
    .await
}
