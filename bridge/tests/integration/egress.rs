//! What one client can make the bridge send: a socket's repeated
//! `bridgeSubscribe` get at most one whole list per query interval (an
//! identical one is confirmed, a changed one answered when the interval
//! allows, the latest winning), and one client address gets a few whole
//! lists a second, over `/api/` and new sockets alike, while another address
//! is served as usual. "Other addresses" are other loopback addresses
//! (127.0.0.2 routes to lo on Linux).

use crate::common;

use std::{
    net::SocketAddr,
    sync::atomic::Ordering::Relaxed,
    time::{Duration, Instant},
};

use common::*;
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    net::TcpStream,
};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const HOST_A: &str = "127.0.0.1";
const HOST_B: &str = "127.0.0.2";

const PLAIN: &str = r#"{"command":"bridgeSubscribe"}"#;
const DELTAS: &str = r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#;

/// A WebSocket to the bridge at `to` from `from`.
async fn ws_from(from: &str, to: SocketAddr) -> Ws {
    let stream = connect_from(from, to).await;
    let req = format!("ws://{to}/ws").into_client_request().unwrap();
    let stream = tokio_tungstenite::MaybeTlsStream::Plain(stream);
    let (ws, _) = tokio::time::timeout(HUNG, tokio_tungstenite::client_async(req, stream))
        .await
        .expect("upgrade timed out")
        .expect("upgrade refused");
    ws
}

/// Whether `v` carries the whole list: a plain list or a snapshot.
fn is_whole(v: &Value) -> bool {
    v["command"] == "msRQueryGameServers" || v["command"] == "bridgeSnapshot"
}

/// Every message that arrives within `quiet` of the previous one.
async fn drain(ws: &mut Ws, quiet: Duration) -> Vec<(Instant, Value)> {
    let mut got = Vec::new();
    while let Ok(v) = tokio::time::timeout(quiet, recv_json(ws)).await {
        got.push((Instant::now(), v));
    }
    got
}

/// A bridge with its master in the process and one server listed, with
/// `config` changed by `tune`; the list is published before it returns.
async fn product(tune: impl FnOnce(&mut bridge::Config)) -> (TestMaster, TestBridge, TcpStream) {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    // Nothing but the one registration changes the list.
    config.poll_interval = Duration::from_secs(3600);
    tune(&mut config);
    let bridge = TestBridge::embedding(&master, config).await;
    let game = game_server(master.addr, "Listed", 20000).await;
    wait_registered(&master, 1).await;
    let mut probe = ws_from(HOST_B, bridge.addr).await;
    send(&mut probe, PLAIN).await;
    recv_until(&mut probe, |v| is_list(v) && names(v) == ["Listed"]).await;
    (master, bridge, game)
}

#[tokio::test]
async fn repeated_subscribes_get_one_whole_list_per_interval() {
    let interval = Duration::from_millis(200);
    let (master, bridge, _game) = product(|c| c.query_interval = interval).await;
    let mut ws = ws_from(HOST_A, bridge.addr).await;

    // Forty subscribes in a second, switching between whole lists and
    // deltas each time (every one changes the subscription): one whole
    // list at once, then at most one per interval, the last for the
    // latest subscribe (deltas).
    let started = Instant::now();
    for i in 0..40 {
        send(&mut ws, if i % 2 == 0 { PLAIN } else { DELTAS }).await;
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let got = drain(&mut ws, interval * 3).await;
    let window = started.elapsed();
    let whole: Vec<&Value> = got.iter().map(|(_, v)| v).filter(|v| is_whole(v)).collect();
    let bound = (window.as_secs_f64() / interval.as_secs_f64()).ceil() as usize + 1;
    assert!(
        whole.len() <= bound,
        "{} whole lists in {window:?} (at most {bound}): {:?}",
        whole.len(),
        whole.iter().map(|v| &v["command"]).collect::<Vec<_>>()
    );
    assert!(
        whole.len() >= 2,
        "the held subscribes were dropped: {got:?}"
    );
    let last = whole.last().unwrap();
    assert_eq!(
        last["command"], "bridgeSnapshot",
        "the latest subscribe wins"
    );
    eprintln!("{} whole lists in {window:?}", whole.len());
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn identical_subscribes_are_confirmed_and_changed_ones_honoured() {
    let interval = Duration::from_millis(200);
    let (master, bridge, _game) = product(|c| c.query_interval = interval).await;
    let mut ws = ws_from(HOST_A, bridge.addr).await;
    send(&mut ws, DELTAS).await;
    let v = recv_json(&mut ws).await;
    assert_eq!(v["command"], "bridgeSnapshot", "{v}");
    let epoch = v["content"]["epoch"].as_str().unwrap().to_owned();
    let seq = v["content"]["seq"].as_u64().unwrap();

    // An identical delta subscribe (the list it holds is current) is
    // confirmed with an empty delta, however often it comes.
    let current = format!(
        r#"{{"command":"bridgeSubscribe","content":{{"deltas":true,"epoch":"{epoch}","since":{seq}}}}}"#
    );
    for _ in 0..10 {
        send(&mut ws, &current).await;
    }
    let got = drain(&mut ws, interval * 2).await;
    assert_eq!(got.len(), 10, "one answer each: {got:?}");
    for (_, v) in &got {
        assert_eq!(v["command"], "bridgeDelta", "{v}");
        assert_eq!(v["content"]["prev"], seq, "{v}");
        assert_eq!(v["content"]["seq"], seq, "{v}");
        assert_eq!(v["content"]["upsert"], serde_json::json!([]), "{v}");
    }

    // A changed subscribe (back to whole lists) is honoured: the list.
    send(&mut ws, PLAIN).await;
    let v = recv_json(&mut ws).await;
    assert!(is_list(&v), "{v}");
    assert_eq!(names(&v), ["Listed"]);
    // An identical plain subscribe is confirmed with the master's state,
    // not the list again.
    for _ in 0..10 {
        send(&mut ws, PLAIN).await;
    }
    let got = drain(&mut ws, interval * 2).await;
    assert_eq!(got.len(), 10, "one answer each: {got:?}");
    for (_, v) in &got {
        assert_eq!(v["command"], "bridgeStatus", "{v}");
        assert_eq!(v["content"]["master"], "up", "{v}");
    }

    // After an unsubscribe, a subscribe is not identical: the list again.
    send(&mut ws, r#"{"command":"bridgeUnsubscribe"}"#).await;
    send(&mut ws, PLAIN).await;
    let v = recv_json(&mut ws).await;
    assert!(is_list(&v), "{v}");
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn a_changed_subscribe_within_the_interval_is_answered_at_its_end() {
    let interval = Duration::from_millis(500);
    let (master, bridge, _game) = product(|c| c.query_interval = interval).await;
    let mut ws = ws_from(HOST_A, bridge.addr).await;
    let first = Instant::now();
    send(&mut ws, PLAIN).await;
    let v = recv_json(&mut ws).await;
    assert!(is_list(&v), "{v}");
    // Deltas (held), whole lists again (what it has: confirmed at once,
    // and the held one dropped), then deltas again (held): only the last
    // counts, answered once the interval since the list has passed.
    send(&mut ws, DELTAS).await;
    send(&mut ws, PLAIN).await;
    send(&mut ws, DELTAS).await;
    let v = recv_json(&mut ws).await;
    assert_eq!(v["command"], "bridgeStatus", "{v}");
    let v = recv_json(&mut ws).await;
    assert_eq!(v["command"], "bridgeSnapshot", "{v}");
    assert!(
        first.elapsed() >= interval,
        "answered after {:?}",
        first.elapsed()
    );
    let more = drain(&mut ws, interval * 2).await;
    assert!(more.is_empty(), "more than the latest: {more:?}");
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn new_sockets_from_one_address_share_its_budget() {
    // One list a second per address after a burst of three.
    let (master, bridge, _game) = product(|c| {
        c.api_rate_per_sec = 1;
        c.api_burst = 3;
    })
    .await;
    // Three sockets from A get the list at once, as a page would.
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut ws = ws_from(HOST_A, bridge.addr).await;
        send(&mut ws, PLAIN).await;
        let v = recv_json(&mut ws).await;
        assert!(is_list(&v), "{v}");
        held.push(ws);
    }
    // A fourth waits for the address's next token.
    let mut fourth = ws_from(HOST_A, bridge.addr).await;
    send(&mut fourth, PLAIN).await;
    let asked = Instant::now();
    let early = tokio::time::timeout(Duration::from_millis(400), recv_json(&mut fourth)).await;
    assert!(early.is_err(), "a fourth list at once: {early:?}");
    // Another address is served at once meanwhile.
    let mut other = ws_from(HOST_B, bridge.addr).await;
    send(&mut other, PLAIN).await;
    let v = tokio::time::timeout(Duration::from_millis(400), recv_json(&mut other))
        .await
        .expect("the other address waited");
    assert!(is_list(&v), "{v}");
    // The fourth is not dropped: it comes with the token.
    let v = recv_json(&mut fourth).await;
    assert!(is_list(&v), "{v}");
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    bridge.shutdown().await;
    master.shutdown().await;
}

/// One response on a keep-alive connection: status, head, body.
async fn read_one(r: &mut BufReader<TcpStream>) -> (u16, String, Vec<u8>) {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let n = tokio::time::timeout(HUNG, r.read_line(&mut line))
            .await
            .expect("no answer")
            .unwrap();
        assert!(n > 0, "closed after {head:?}");
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let length = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    r.read_exact(&mut body).await.unwrap();
    (status, head, body)
}

/// A keep-alive connection to the bridge from `from`.
async fn keep_alive(from: &str, bridge: SocketAddr) -> BufReader<TcpStream> {
    BufReader::new(connect_from(from, bridge).await)
}

async fn get(
    conn: &mut BufReader<TcpStream>,
    bridge: SocketAddr,
    path: &str,
    extra: &str,
) -> (u16, String, Vec<u8>) {
    let req = format!("GET {path} HTTP/1.1\r\nHost: {bridge}\r\n{extra}\r\n");
    conn.get_mut().write_all(req.as_bytes()).await.unwrap();
    read_one(conn).await
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Plain GETs from `conn` until one is refused (the address's bucket is
/// empty then); returns how many were refused (one).
async fn empty_the_bucket(conn: &mut BufReader<TcpStream>, bridge: SocketAddr) -> usize {
    for _ in 0..100 {
        if get(conn, bridge, "/api/servers", "").await.0 == 429 {
            return 1;
        }
    }
    panic!("never refused");
}

#[tokio::test]
async fn api_bodies_are_rate_limited_per_address_and_revalidations_are_not() {
    let (master, bridge, _game) = product(|c| {
        c.api_rate_per_sec = 1;
        c.api_burst = 5;
    })
    .await;
    let mut a = keep_alive(HOST_A, bridge.addr).await;
    let started = Instant::now();
    let mut statuses = Vec::new();
    let mut etag = None;
    let mut limited_head = None;
    for _ in 0..30 {
        let (status, head, body) = get(&mut a, bridge.addr, "/api/servers", "").await;
        if status == 200 {
            etag = header(&head, "etag").map(str::to_owned);
        }
        if status == 429 {
            assert!(body.len() < 100, "a tiny body: {}", body.len());
            limited_head.get_or_insert(head);
        }
        statuses.push(status);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let ok = statuses.iter().filter(|s| **s == 200).count();
    let mut refused = statuses.len() - ok;
    // The burst, plus what the rate gave back meanwhile.
    assert!(ok >= 5, "{statuses:?}");
    assert!(ok as f64 <= 5.0 + elapsed + 1.0, "{statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 429),
        "{statuses:?}"
    );
    let head = limited_head.expect("no 429");
    let retry: u64 = header(&head, "retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry), "Retry-After {retry}");

    // Another address gets the list meanwhile.
    let mut b = keep_alive(HOST_B, bridge.addr).await;
    let (status, _, body) = get(&mut b, bridge.addr, "/api/servers", "").await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["servers"][0]["name"], "Listed");

    // A revalidation with the current ETag costs nothing: 304 every time,
    // though A has no token left; a stale one is a body, and refused.
    let etag = etag.expect("no ETag");
    refused += empty_the_bucket(&mut a, bridge.addr).await;
    for _ in 0..20 {
        let inm = format!("If-None-Match: {etag}\r\n");
        let (status, _, body) = get(&mut a, bridge.addr, "/api/servers", &inm).await;
        assert_eq!(status, 304);
        assert!(body.is_empty());
    }
    refused += empty_the_bucket(&mut a, bridge.addr).await;
    let stale = "If-None-Match: \"other-1\"\r\n";
    let (status, _, _) = get(&mut a, bridge.addr, "/api/servers", stale).await;
    assert_eq!(status, 429);
    refused += 1;
    // Anything else under /api/ counts too; the rest of the site does not.
    let (status, _, _) = get(&mut a, bridge.addr, "/api/nothing-here", "").await;
    assert_eq!(status, 429);
    refused += 1;
    let (status, _, _) = get(&mut a, bridge.addr, "/healthz", "").await;
    assert_eq!(status, 200);

    let counted = bridge.metrics.api_limited.load(Relaxed);
    assert_eq!(counted as usize, refused);
    let (_, _, text) = http_get(bridge.addr, "/metrics", "").await;
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains(&format!("bridge_api_limited_total {counted}\n")),
        "{text}"
    );
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn a_zero_budget_is_refused_by_the_binary_and_the_library() {
    for (flag, env) in [
        ("--api-rate", "BRIDGE_API_RATE"),
        ("--api-burst", "BRIDGE_API_BURST"),
    ] {
        let out = tokio::time::timeout(
            HUNG,
            piped(&BridgeLaunch {
                args: vec![flag.into(), "0".into()],
                ..bridge_launch()
            })
            .env_remove(env)
            .output(),
        )
        .await
        .unwrap_or_else(|_| panic!("{flag} 0 did not end the bridge"))
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag} 0 was accepted");
        assert!(
            stderr.contains(flag) && stderr.contains("greater than zero"),
            "{flag}: {stderr}"
        );
    }
    let mut config = test_config("127.0.0.1:1".parse().unwrap());
    config.api_burst = 0;
    let err = config.validate().unwrap_err().to_string();
    assert!(err.contains("API answer burst"), "{err}");
}

/// A loop of revalidations (`If-None-Match`) of answers that are not
/// cached (a new key each time) from one address: each is charged before
/// anything is computed, so after the burst they are refused without work,
/// while another address is served.
#[tokio::test]
async fn revalidations_of_uncached_answers_are_charged_before_any_work() {
    const BURST: u32 = 5;
    const LOOPS: u64 = 200;
    let (_master, bridge, _game) = product(|c| {
        c.api_rate_per_sec = 1;
        c.api_burst = BURST;
    })
    .await;
    let computed = || bridge.metrics.api_computed.load(Relaxed);
    let before = computed();
    let mut b = keep_alive(HOST_B, bridge.addr).await;
    let started = Instant::now();
    let mut statuses = Vec::new();
    for i in 0..LOOPS {
        let path = format!("/api/servers/{i:016x}");
        let (status, _, _) = get(&mut b, bridge.addr, &path, "If-None-Match: \"h0\"\r\n").await;
        statuses.push(status);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let work = computed() - before;
    let refused = statuses.iter().filter(|s| **s == 429).count();
    eprintln!(
        "{LOOPS} revalidations of uncached answers from {HOST_B} in {elapsed:.2} s: {work} computed, {refused} refused"
    );
    // The burst, and what the rate gave back meanwhile; nothing more.
    assert!(work >= 1, "nothing was computed: {statuses:?}");
    assert!(
        work as f64 <= f64::from(BURST) + elapsed + 1.0,
        "{work} answers computed for {LOOPS} requests"
    );
    assert!(refused as f64 >= LOOPS as f64 - f64::from(BURST) - elapsed - 1.0);
    // Another address is served meanwhile (and its answer computed).
    let mut a = keep_alive(HOST_A, bridge.addr).await;
    let (status, _, _) = get(&mut a, bridge.addr, "/api/servers/00000000000000ff", "").await;
    assert_eq!(status, 404, "served: no server has this key");
    assert_eq!(computed() - before, work + 1);
}
