//! Webhooks (`docs/protocol.md` §4.10): how long a game server's change
//! (its lobby opening) takes to reach a webhook receiver's first request,
//! beside the same change reaching a delta-subscribed viewer of `/ws` (the
//! same run's baseline: the change reaching the bridge and leaving it).
//! A Discord status card (§2.6) against the test kit's Discord stand-in:
//! how long a change made right after the card's last edit takes to reach
//! the message as an edit (the whole coalescing window), beside the first
//! post's latency (the same path without the window).
//! Then the same with several bridges on one PostgreSQL database behind
//! one master (`shared_db`): the webhook made through one bridge, the
//! viewer on another, any bridge sending; beside the one bridge's figure.
//! The receiver runs on loopback, so the bridges run with
//! `--webhook-allow-private`.

use std::{net::SocketAddr, time::Duration};

use hdrhistogram::Histogram;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
    time::Instant,
};

use lobby_testkit::{
    discord::{Discord, Got},
    product::ADMIN_TOKEN,
};

use crate::{
    direct,
    error::{within, Error, Result},
    phases::{
        shared_db::{self, Shared},
        Env,
    },
    procs::{self, BridgeLaunch},
    report::{histogram, ms, q, record, times, Row, Verdict},
    ws,
};

/// The target: the first attempt leaves within 2 s of the change.
const TARGET: Duration = Duration::from_secs(2);
/// A status card's target: a change reaches the message as an edit
/// within the coalescing window (10 s) plus 2 s.
const CARD_TARGET: Duration = Duration::from_secs(12);
/// Players of the measured server: a marker per change, above the others'.
const MARKER_BASE: u64 = 30_000;
/// The shared bridges' database.
const DB: &str = "lobby_webhooks";

const SHARED_FIGURE: &str = "webhooks on bridges sharing one PostgreSQL database";

/// What one run gave.
struct Figures {
    /// From each change to the receiver's first request.
    hook: Histogram<u64>,
    /// From each change to the delta viewer.
    push: Histogram<u64>,
    /// Requests beyond one per change.
    extra: usize,
}

/// Runs the phase: one bridge with its embedded master, then
/// [`Sizes::notify_bridges`](crate::Sizes) on one PostgreSQL database.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let opts = BridgeLaunch {
        rate_limit: procs::UNLIMITED,
        webhook_allow_private: true,
        ..procs::bridge(&env.bins)
    };
    let (bridge, baddr, maddr) = procs::start_bridge_embedded(&env.bins, &opts).await?;
    let servers = direct::register_servers(maddr, s.webhook_servers, "Hook", 0).await?;
    let one = measure_with(env, servers, baddr, baddr, None).await?;
    bridge.stop().await;
    let mut rows = vec![row(&one.hook, &one.push, s.webhook_servers)];

    let (bridge, baddr, maddr) = procs::start_bridge_embedded(&env.bins, &opts).await?;
    let servers = direct::register_servers(maddr, s.webhook_servers, "Card", 0).await?;
    let card = card_edits(env, servers, baddr).await;
    bridge.stop().await;
    rows.push(card?);

    if let Some(why) = shared_db::unavailable() {
        rows.push(Row::skipped(SHARED_FIGURE, why));
        return Ok(rows);
    }
    let n = s.notify_bridges.max(2);
    let shared = Shared::start(env, DB, n, s.webhook_servers + 100, opts).await?;
    let servers =
        direct::register_servers(shared.master_addr, s.webhook_servers, "Hook", 0).await?;
    let addrs = shared.addrs();
    let (first, last) = (addrs[0], addrs[addrs.len() - 1]);
    // Made through the first bridge, the viewer on the last: every bridge
    // must read the webhook from the database before the first change.
    let many = measure_with(env, servers, first, last, Some(&shared)).await?;
    let sent = shared
        .each("bridge_webhook_deliveries_total{result=\"delivered\"}")
        .await?;
    let left = shared
        .stop_and_count("SELECT count(*) FROM notify_deliveries")
        .await?;
    rows.push(shared_row(&many, &one, &sent, left, s.webhook_servers));
    Ok(rows)
}

/// The rounds: `webhook_rounds` times the first server closes its lobby
/// (seen by the viewer), then opens it; timed to the receiver's request.
/// With `shared`, first waits until every bridge has the webhook.
async fn measure_with(
    env: &Env,
    mut servers: Vec<direct::Conn>,
    make: SocketAddr,
    view: SocketAddr,
    shared: Option<&Shared>,
) -> Result<Figures> {
    let (addr, mut arrivals) =
        receiver(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n").await?;
    let url = format!("http://{addr}/hook");
    create_webhook(make, &lobby_opened(&url)).await?;
    if let Some(shared) = shared {
        shared.all_say("bridge_webhooks", 1.0).await?;
    }
    let mut viewer = ws::connect(&ws::url(view)).await?;
    ws::send(
        &mut viewer,
        r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#,
    )
    .await?;
    ws::next_text(&mut viewer).await?; // the snapshot

    let (mut hook, mut push) = (histogram(), histogram());
    let mut extra = 0;
    let game = servers
        .first_mut()
        .ok_or_else(|| Error::Unexpected("no server registered".into()))?;
    for i in 0..env.sizes.webhook_rounds as u64 {
        let marker = MARKER_BASE + 2 * i;
        // Closed first (no event), seen by the viewer; then open.
        direct::send(game, &stats(marker, false)).await?;
        seen(&mut viewer, marker).await?;
        // A request the last opening caused twice (it must not count as
        // this one's).
        while arrivals.try_recv().is_ok() {
            extra += 1;
        }
        let t0 = Instant::now();
        direct::send(game, &stats(marker + 1, true)).await?;
        seen(&mut viewer, marker + 1).await?;
        record(&mut push, t0.elapsed());
        let at = within("the webhook's request", async {
            arrivals
                .recv()
                .await
                .ok_or_else(|| Error::Unexpected("the receiver stopped".into()))
        })
        .await?;
        record(&mut hook, at.saturating_duration_since(t0));
    }
    drop(servers);
    Ok(Figures { hook, push, extra })
}

/// A status card of every server (the measured one the busiest, so
/// shown): the first change posts it (the baseline), then
/// `card_edit_rounds` times a change is made right after the card's last
/// request and timed to the edit that shows it.
async fn card_edits(env: &Env, mut servers: Vec<direct::Conn>, bridge: SocketAddr) -> Result<Row> {
    let mut discord = Discord::start().await?;
    create_webhook(
        bridge,
        &format!(
            r#"{{"url":"{}","format":"discord-card","servers":"all"}}"#,
            discord.url
        ),
    )
    .await?;
    let game = servers
        .first_mut()
        .ok_or_else(|| Error::Unexpected("no server registered".into()))?;
    let mut change = async |i: u64| -> Result<(Got, Duration)> {
        let marker = MARKER_BASE + i;
        let t0 = Instant::now();
        direct::send(game, &stats(marker, i.is_multiple_of(2))).await?;
        let shown = format!("{marker}/4 players");
        let got = within("the card showing the change", async {
            loop {
                let got = discord
                    .recv()
                    .await
                    .ok_or_else(|| Error::Unexpected("the stand-in stopped".into()))?;
                if got.body["embeds"][0]["description"]
                    .as_str()
                    .is_some_and(|t| t.contains(&shown))
                {
                    return Ok(got);
                }
            }
        })
        .await?;
        let took = got.at.saturating_duration_since(t0);
        Ok((got, took))
    };
    let (first, posted) = change(0).await?;
    if !first.is_post() {
        return Err(Error::Unexpected(format!(
            "the card's first request is no post: {} {}",
            first.method, first.path
        )));
    }
    let mut edits = histogram();
    let rounds = env.sizes.card_edit_rounds.max(1);
    for i in 1..=rounds as u64 {
        let (got, took) = change(i).await?;
        if got.edited().is_none() {
            return Err(Error::Unexpected(format!(
                "the card was not edited: {} {}",
                got.method, got.path
            )));
        }
        record(&mut edits, took);
    }
    drop(servers);
    let worst = Duration::from_micros(edits.max());
    Ok(Row::new(
        format!(
            "Discord status card: a change made right after its last edit to the edit \
             showing it ({rounds} changes, {} servers listed), p50 / max",
            env.sizes.webhook_servers
        ),
        format!("{} / {}", q(&edits, 0.5), ms(edits.max())),
        format!(
            "{} for the first post (no window)",
            ms(posted.as_micros() as u64)
        ),
        times(edits.max() as f64, posted.as_micros().max(1) as f64),
        "max ≤ 12 s (10 s window + 2 s)",
        Verdict::of(worst <= CARD_TARGET),
    ))
}

fn shared_row(many: &Figures, one: &Figures, sent: &[f64], left: i64, servers: usize) -> Row {
    let p95 = |h: &Histogram<u64>| h.value_at_quantile(0.95);
    let n = sent.len();
    Row::new(
        format!(
            "{SHARED_FIGURE} ({n} bridges behind one master, --master-feed; made through the \
             first, viewer on the last; {servers} servers listed): a change to the receiver's \
             first request, p50 / p95"
        ),
        format!(
            "{} / {} (sent by each bridge: {}; extra requests: {}; delivery rows left: {left})",
            q(&many.hook, 0.5),
            q(&many.hook, 0.95),
            shared_db::split(sent),
            many.extra
        ),
        format!(
            "{} / {} with one bridge (embedded master, SQLite)",
            q(&one.hook, 0.5),
            q(&one.hook, 0.95)
        ),
        times(p95(&many.hook) as f64, p95(&one.hook).max(1) as f64),
        "p95 ≤ 2 s",
        Verdict::of(Duration::from_micros(p95(&many.hook)) <= TARGET),
    )
}

fn row(hook: &Histogram<u64>, push: &Histogram<u64>, servers: usize) -> Row {
    let p95 = Duration::from_micros(hook.value_at_quantile(0.95));
    Row::new(
        format!("webhooks: a change to the receiver's first request ({servers} servers listed), p50 / p95"),
        format!("{} / {}", q(hook, 0.5), q(hook, 0.95)),
        format!("{} / {} to a delta viewer", q(push, 0.5), q(push, 0.95)),
        "-",
        "p95 ≤ 2 s",
        Verdict::of(p95 <= TARGET),
    )
}

/// `msUpdateGameServerStats` with `current` players (a marker) and the
/// lobby open or closed (the push phase's too).
pub(crate) fn stats(current: u64, open: bool) -> String {
    format!(
        r#"{{"command":"msUpdateGameServerStats","content":{{"players":{{"current":{current},"max":4}},"isLobbyOpen":{open},"gameplayMode":1}}}}"#
    )
}

/// Reads the viewer's messages until one carries `current`.
pub(crate) async fn seen(viewer: &mut ws::Ws, current: u64) -> Result<()> {
    let marker = direct::marker(current);
    within("the change at the viewer", async {
        while !ws::next_text(viewer).await?.as_str().contains(&marker) {}
        Ok(())
    })
    .await
}

/// A receiver on loopback (a webhook's, a push service): answers every
/// request with `answer` (a whole HTTP/1.1 head without body) on
/// kept-alive connections and reports when each arrived (once its whole
/// body was read). Its address, and the arrivals.
pub(crate) async fn receiver(
    answer: &'static [u8],
) -> Result<(SocketAddr, mpsc::UnboundedReceiver<Instant>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while read_message(&mut s, &mut buf).await.is_ok() {
                    let _ = tx.send(Instant::now());
                    if s.write_all(answer).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    Ok((addr, rx))
}

/// Reads one HTTP message (head and `content-length` body, at most
/// 64 KiB) from `s`, keeping what follows it in `buf`: its head and body.
pub(crate) async fn read_message(
    s: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Result<(String, Vec<u8>)> {
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len: usize = head
                .to_ascii_lowercase()
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                let body = buf[end + 4..end + 4 + len].to_vec();
                buf.drain(..end + 4 + len);
                return Ok((head, body));
            }
        }
        let n = s.read(&mut chunk).await?;
        if n == 0 || buf.len() > 64 * 1024 {
            return Err(Error::Unexpected("the connection closed".into()));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A `lobby-opened` webhook without cooldown, to `url`.
fn lobby_opened(url: &str) -> String {
    format!(
        r#"{{"url":"{url}","format":"standard","events":["lobby-opened"],"servers":"all","cooldown":0}}"#
    )
}

/// Creates the webhook `body` asks for.
async fn create_webhook(bridge: SocketAddr, body: &str) -> Result<()> {
    let request = format!(
        "POST /api/admin/webhooks HTTP/1.1\r\nHost: {bridge}\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = TcpStream::connect(bridge).await?;
    s.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    within("the webhook's creation", async {
        s.read_to_end(&mut answer).await?;
        Ok(())
    })
    .await?;
    let text = String::from_utf8_lossy(&answer);
    if !text.starts_with("HTTP/1.1 201") {
        return Err(Error::Unexpected(format!(
            "creating the webhook: {}",
            text.lines().next().unwrap_or_default()
        )));
    }
    Ok(())
}
