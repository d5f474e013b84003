//! The defences against one hostile host: it cannot take the bridge away from the
//! others (connection caps per address and in all, header-read and idle
//! timeouts, the open-file limit), forwarded addresses count only from
//! trusted proxies, bad settings are refused at start, and the session's
//! own limits (failed `bridgeAuth` per address, pings counted toward the
//! message rate, query answers at a bounded rate) hold, and floods cost the
//! log a few lines (counted in `/metrics` instead). "Other hosts"
//! are other loopback addresses (127.0.0.2, 127.0.0.3 route to lo on Linux).

use crate::common;

use std::{
    net::SocketAddr,
    process::Stdio,
    sync::atomic::Ordering::Relaxed,
    time::{Duration, Instant},
};

use bridge::{Bridge, Config};
use common::*;
use futures_util::SinkExt;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    process::{Child, Command},
};
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest};

const HOST_A: &str = "127.0.0.1";
const HOST_B: &str = "127.0.0.2";
const HOST_C: &str = "127.0.0.3";

/// A GET from `from`; returns the status and the body (`None`: the
/// connection closed without an answer).
async fn get_from(from: &str, to: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut s = connect_from(from, to).await;
    let req = format!("GET {path} HTTP/1.1\r\nHost: {to}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.ok()?;
    read_response(&mut s).await
}

/// Reads a whole `Connection: close` response.
async fn read_response(s: &mut TcpStream) -> Option<(u16, String)> {
    let mut buf = Vec::new();
    // A reset after the answer still leaves the answer in `buf`.
    let _ = tokio::time::timeout(HUNG, s.read_to_end(&mut buf))
        .await
        .expect("no answer and no close");
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned())?;
    Some((status, body))
}

/// A WebSocket to the bridge at `to` from `from`, with extra headers;
/// `Err(status)` when the upgrade is refused.
async fn ws_from(from: &str, to: SocketAddr, headers: &[(&str, &str)]) -> Result<Ws, u16> {
    let stream = connect_from(from, to).await;
    let mut req = format!("ws://{to}/ws").into_client_request().unwrap();
    for (name, value) in headers {
        let name = tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap();
        req.headers_mut()
            .insert(name, value.parse().expect("header value"));
    }
    let stream = tokio_tungstenite::MaybeTlsStream::Plain(stream);
    match tokio::time::timeout(HUNG, tokio_tungstenite::client_async(req, stream))
        .await
        .expect("upgrade timed out")
    {
        Ok((ws, _)) => Ok(ws),
        Err(tungstenite::Error::Http(resp)) => Err(resp.status().as_u16()),
        Err(e) => panic!("unexpected upgrade error: {e}"),
    }
}

/// Subscribes and waits for the first list.
async fn gets_list(ws: &mut Ws) {
    send(ws, r#"{"command":"bridgeSubscribe"}"#).await;
    recv_until(ws, is_list).await;
}

#[tokio::test]
async fn per_address_http_cap() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.max_http_per_address = 4;
    let bridge = TestBridge::start(config).await;
    let open = || bridge.metrics.http_connections.load(Relaxed);

    // Host A holds its four connections without sending a byte.
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(connect_from(HOST_A, bridge.addr).await);
    }
    lobby_testkit::until_true("four connections are open", || open() == 4).await;
    // Its fifth is turned away before anything is read...
    let (status, body) = get_from(HOST_A, bridge.addr, "/healthz")
        .await
        .expect("an answer");
    assert_eq!((status, body.as_str()), (503, "too many connections\n"));
    assert_eq!(bridge.metrics.http_refused_address.load(Relaxed), 1);
    // ...while host B is served,
    let (status, body) = get_from(HOST_B, bridge.addr, "/healthz").await.unwrap();
    assert!(body.contains("master"), "{status} {body}");
    // and a closed connection gives host A its slot back.
    held.pop();
    lobby_testkit::until_true("a slot is free again", || open() == 3).await;
    let (_, body) = get_from(HOST_A, bridge.addr, "/healthz").await.unwrap();
    assert!(body.contains("master"), "{body}");
    drop(held);
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn total_http_cap() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.max_http_connections = 3;
    let bridge = TestBridge::start(config).await;
    let mut held = Vec::new();
    for host in [HOST_A, HOST_B, HOST_C] {
        held.push(connect_from(host, bridge.addr).await);
    }
    lobby_testkit::until_true("three connections are open", || {
        bridge.metrics.http_connections.load(Relaxed) == 3
    })
    .await;
    let (status, body) = get_from(HOST_C, bridge.addr, "/healthz").await.unwrap();
    assert_eq!((status, body.as_str()), (503, "too many connections\n"));
    assert_eq!(bridge.metrics.http_refused_full.load(Relaxed), 1);
    drop(held);
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn per_address_websocket_cap() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.max_ws_per_address = 2;
    let bridge = TestBridge::start(config).await;
    let mut first = ws_from(HOST_A, bridge.addr, &[]).await.unwrap();
    let _second = ws_from(HOST_A, bridge.addr, &[]).await.unwrap();
    assert_eq!(ws_from(HOST_A, bridge.addr, &[]).await.err(), Some(503));
    assert_eq!(bridge.metrics.refused_ws_address.load(Relaxed), 1);
    // Another host is not affected.
    let mut other = ws_from(HOST_B, bridge.addr, &[]).await.unwrap();
    gets_list(&mut other).await;
    // A closed WebSocket gives its slot back.
    first.close(None).await.unwrap();
    let mut again = until("the slot back", || async {
        match ws_from(HOST_A, bridge.addr, &[]).await {
            Ok(ws) => Ok(ws),
            Err(503) => Err("503"),
            Err(status) => panic!("{status} for a WebSocket"),
        }
    })
    .await;
    gets_list(&mut again).await;
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn forwarded_addresses_count_from_trusted_proxies_only() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.trusted_proxies = vec![format!("{HOST_B}/32").parse().unwrap()];
    config.max_ws_per_address = 1;
    // The proxy carries three WebSockets below: it is exempt from this.
    config.max_http_per_address = 2;
    let bridge = TestBridge::start(config).await;
    let xff = |client| [("X-Forwarded-For", client)];

    // Through the trusted proxy (host B) each forwarded client has its own
    // slot, and a client forging an entry on the left gains nothing.
    let mut one = ws_from(HOST_B, bridge.addr, &xff("203.0.113.1"))
        .await
        .expect("first client");
    gets_list(&mut one).await;
    assert_eq!(
        ws_from(HOST_B, bridge.addr, &xff("198.51.100.7, 203.0.113.1"))
            .await
            .err(),
        Some(503),
        "the same forwarded client must hit its cap"
    );
    let mut two = ws_from(HOST_B, bridge.addr, &xff("203.0.113.2"))
        .await
        .expect("a second forwarded client");
    gets_list(&mut two).await;
    let _three = ws_from(HOST_B, bridge.addr, &xff("203.0.113.3"))
        .await
        .expect("the proxy is not held to the per-address HTTP cap");

    // From anyone else the header is ignored: host C is host C.
    let _c = ws_from(HOST_C, bridge.addr, &xff("203.0.113.4"))
        .await
        .expect("host C's first");
    assert_eq!(
        ws_from(HOST_C, bridge.addr, &xff("203.0.113.5"))
            .await
            .err(),
        Some(503),
        "an untrusted peer's X-Forwarded-For must not count"
    );
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn header_read_timeout_closes_a_slow_request() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.header_read_timeout = Duration::from_millis(500);
    config.idle_timeout = Duration::from_secs(60);
    let bridge = TestBridge::start(config).await;
    let mut s = connect_from(HOST_A, bridge.addr).await;
    let start = Instant::now();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // One header byte every 100 ms, never finishing the head.
    let mut closed = false;
    let mut buf = [0u8; 512];
    while start.elapsed() < Duration::from_secs(5) {
        if s.write_all(b"X").await.is_err() {
            closed = true;
            break;
        }
        match tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await {
            Err(_) => {}
            // EOF, a reset, or hyper's 408 before closing.
            Ok(Ok(0) | Err(_)) => {
                closed = true;
                break;
            }
            Ok(Ok(n)) => {
                let text = String::from_utf8_lossy(&buf[..n]);
                assert!(text.starts_with("HTTP/1.1 408"), "{text}");
            }
        }
    }
    let took = start.elapsed();
    assert!(
        closed,
        "a request head trickling for {took:?} was not closed"
    );
    assert!(
        took >= Duration::from_millis(400),
        "closed too early: {took:?}"
    );
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_at_the_header_timeout() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.header_read_timeout = Duration::from_millis(500);
    config.idle_timeout = Duration::from_secs(60);
    let bridge = TestBridge::start(config).await;
    let mut s = connect_from(HOST_A, bridge.addr).await;
    let start = Instant::now();
    let mut buf = [0u8; 512];
    let read = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await;
    let took = start.elapsed();
    assert!(
        matches!(read, Ok(Ok(0) | Err(_))),
        "a silent connection was still open after {took:?}: {read:?}"
    );
    assert!(
        took >= Duration::from_millis(400),
        "closed too early: {took:?}"
    );
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.header_read_timeout = Duration::from_secs(60);
    config.idle_timeout = Duration::from_millis(500);
    let bridge = TestBridge::start(config).await;
    let mut s = connect_from(HOST_A, bridge.addr).await;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let start = Instant::now();
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = 0;
    let eof = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got += n,
            }
        }
    })
    .await;
    assert!(got > 0, "no answer");
    assert!(eof.is_ok(), "an idle keep-alive connection stayed open");
    assert!(start.elapsed() >= Duration::from_millis(400));
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn zero_intervals_are_refused_by_the_library() {
    let master = TestMaster::start().await;
    type Zero = fn(&mut Config);
    let zeroes: [(&str, Zero); 4] = [
        ("poll interval", |c| c.poll_interval = Duration::ZERO),
        ("ping interval", |c| c.ping_interval = Duration::ZERO),
        ("game poll interval", |c| {
            c.game_poll_interval = Duration::ZERO
        }),
        ("header read timeout", |c| {
            c.header_read_timeout = Duration::ZERO
        }),
    ];
    for (name, zero) in zeroes {
        let mut config = test_config(master.addr);
        zero(&mut config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let result = tokio::time::timeout(
            HUNG,
            Bridge::new(config)
                .expect("the bridge opens its database")
                .run(listener, std::future::pending()),
        )
        .await
        .unwrap_or_else(|_| panic!("a zero {name} was not refused"));
        let err = result.expect_err(name).to_string();
        assert!(
            err.contains(name) && err.contains("greater than zero"),
            "{err}"
        );
    }
    master.shutdown().await;
}

// The binary.

/// The binary ([`bridge_launch`]) with `token` and `args`, logging
/// warnings only, as a child of this test ([`piped`]).
fn bridge_cmd(token: &str, args: &[&str]) -> Command {
    let mut launch = bridge_launch();
    launch.admin_token = lobby_testkit::launch::AdminToken::Env(token.into());
    launch.rust_log = "warn";
    launch.args = args.iter().map(Into::into).collect();
    piped(&launch)
}

/// Starts the binary with this open-file limit (soft, hard) and waits for
/// its readiness line; returns it and its HTTP address.
async fn start_limited(args: &[&str], soft: u64, hard: u64) -> (Child, SocketAddr) {
    // The shell lowers its limits and then becomes the bridge (`exec`), so
    // the test needs no `pre_exec` (the product crates forbid unsafe code).
    let mut args = args.to_vec();
    args.extend(["--poll-interval", "100ms"]);
    let bridge = bridge_cmd(TOKEN, &args);
    let bridge = bridge.as_std();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            r#"ulimit -Sn {soft} && ulimit -Hn {hard} && exec "$0" "$@""#
        ))
        .arg(bridge.get_program())
        .args(bridge.get_args());
    for (name, value) in bridge.get_envs() {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let http = readiness(&mut child).await.0;
    (child, http)
}

/// The soft open-file limit of process `pid`, from /proc.
fn soft_open_files(pid: u32) -> u64 {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    line.split_whitespace().nth(3).unwrap().parse().unwrap()
}

#[tokio::test]
async fn the_binary_raises_its_open_file_limit() {
    let (child, _) = start_limited(&[], 256, 1024).await;
    assert_eq!(soft_open_files(child.id().unwrap()), 1024);
}

/// A service's usual 1,024 open files; one host holds 1,100 unfinished
/// requests. Another host still gets `/healthz` and a list over WebSocket.
#[tokio::test]
async fn slowloris_from_one_host_leaves_the_others_served() {
    rlimit::increase_nofile_limit(4096).unwrap();
    // The header-read timeout is made long here: the caps alone must hold.
    let (_child, http) = start_limited(&["--header-read-timeout", "5m"], 1024, 1024).await;
    let mut held = Vec::with_capacity(1100);
    for _ in 0..1100 {
        let mut s = connect_from(HOST_A, http).await;
        // The server may already have closed the surplus: ignore errors.
        let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ").await;
        held.push(s);
    }
    let (status, body) = get_from(HOST_B, http, "/healthz")
        .await
        .expect("host B got no answer to /healthz");
    assert!(
        body.contains("\"master\""),
        "host B got {status} {body:?} from /healthz"
    );
    let mut ws = ws_from(HOST_B, http, &[])
        .await
        .expect("host B's WebSocket was refused");
    gets_list(&mut ws).await;
    drop(held);
}

#[tokio::test]
async fn zero_intervals_and_caps_are_refused_by_the_binary() {
    for (flag, value) in [
        ("--poll-interval", "0"),
        ("--ping-interval", "0ms"),
        ("--game-poll-interval", "0s"),
        ("--idle-timeout", "0"),
        ("--max-ws-per-address", "0"),
        ("--auth-failures", "0"),
        ("--auth-window", "0s"),
        ("--query-interval", "0"),
    ] {
        let out = tokio::time::timeout(HUNG, bridge_cmd(TOKEN, &[flag, value]).output())
            .await
            .unwrap_or_else(|_| panic!("{flag} {value} did not end the bridge"))
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag} {value} was accepted");
        assert!(
            stderr.contains(flag) && stderr.contains("greater than zero"),
            "{flag}: {stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[tokio::test]
async fn short_operator_tokens_are_refused() {
    let out = tokio::time::timeout(HUNG, bridge_cmd("short-token", &[]).output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("BRIDGE_ADMIN_TOKEN") && stderr.contains("at least 16"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

/// `bridgeAuth` with `token` on `ws`; returns the answer.
async fn auth(ws: &mut Ws, token: &str) -> serde_json::Value {
    send(
        ws,
        &format!(r#"{{"command":"bridgeAuth","content":{{"token":"{token}"}}}}"#),
    )
    .await;
    recv_json(ws).await
}

#[tokio::test]
async fn brute_force_is_rate_limited_per_address() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.auth_max_failures = 3;
    config.auth_window = Duration::from_secs(60);
    let bridge = TestBridge::start(config).await;
    let mut guesser = ws_from(HOST_B, bridge.addr, &[]).await.unwrap();
    for i in 0..3 {
        let reply = auth(&mut guesser, &format!("guess-number-{i}")).await;
        assert_eq!(reply["content"]["ok"], false, "{reply}");
    }
    // The right token no longer helps: it is not even checked.
    let reply = auth(&mut guesser, TOKEN).await;
    assert_eq!(reply["command"], "bridgeError", "{reply}");
    assert_eq!(reply["content"]["code"], "rate-limited", "{reply}");
    // Per address, not per socket: a new one from there is refused too.
    let mut again = ws_from(HOST_B, bridge.addr, &[]).await.unwrap();
    let reply = auth(&mut again, TOKEN).await;
    assert_eq!(reply["content"]["code"], "rate-limited", "{reply}");
    // Another host signs in.
    let mut admin = ws_from(HOST_C, bridge.addr, &[]).await.unwrap();
    let reply = auth(&mut admin, TOKEN).await;
    assert_eq!(reply["content"]["ok"], true, "{reply}");
    assert_eq!(bridge.metrics.auth_failures.load(Relaxed), 3);
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn a_ping_flood_closes_the_socket() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.rate_per_sec = 1;
    config.rate_burst = 5;
    config.flood_close_after = 10;
    let bridge = TestBridge::start(config).await;
    let mut ws = ws_from(HOST_B, bridge.addr, &[]).await.unwrap();
    for _ in 0..50 {
        if ws
            .feed(tungstenite::Message::Ping(Vec::new().into()))
            .await
            .is_err()
        {
            break;
        }
    }
    let _ = ws.flush().await;
    assert_eq!(recv_close(&mut ws).await, 1008);
    // Another host is unaffected.
    let mut other = ws_from(HOST_C, bridge.addr, &[]).await.unwrap();
    gets_list(&mut other).await;
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn a_viewers_queries_are_answered_at_a_bounded_rate() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    let interval = Duration::from_millis(500);
    config.query_interval = interval;
    let bridge = TestBridge::start(config).await;
    let _game = game_server(master.addr, "Listed", 20000).await;
    wait_registered(&master, 1).await;
    // The bridge has a list with the server (another viewer got it), so
    // the first query below is answered at once.
    let mut other = ws_from(HOST_C, bridge.addr, &[]).await.unwrap();
    send(&mut other, r#"{"command":"bridgeSubscribe"}"#).await;
    recv_until(&mut other, |v| is_list(v) && names(v) == ["Listed"]).await;
    let mut ws = ws_from(HOST_B, bridge.addr, &[]).await.unwrap();
    let query = r#"{"command":"msQueryGameServers"}"#;
    // The first answer starts an interval.
    // Timed from before the question: the bridge answered after this, and
    // taking the time after the answer arrived would count however long
    // it took to arrive against the interval.
    let first = Instant::now();
    send(&mut ws, query).await;
    recv_until(&mut ws, is_list).await;
    // Twenty more at once (within the message rate): one answer, at the
    // interval's end, not twenty.
    for _ in 0..20 {
        send(&mut ws, query).await;
    }
    let v = recv_until(&mut ws, is_list).await;
    assert_eq!(names(&v), ["Listed"]);
    assert!(
        first.elapsed() >= interval,
        "answered again after {:?}",
        first.elapsed()
    );
    // Nothing more comes within two more intervals.
    let more = tokio::time::timeout(interval * 2, recv_text(&mut ws)).await;
    assert!(more.is_err(), "a further answer: {more:?}");
    // Once an interval has passed, a query is answered at once again.
    send(&mut ws, query).await;
    let asked = Instant::now();
    recv_until(&mut ws, is_list).await;
    assert!(asked.elapsed() < interval, "waited {:?}", asked.elapsed());
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn a_flood_of_empty_continuation_frames_closes_the_socket() {
    use tungstenite::protocol::frame::{
        coding::{Data, OpCode},
        Frame,
    };
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.rate_per_sec = 1;
    config.rate_burst = 5;
    config.flood_close_after = 10;
    let bridge = TestBridge::start(config).await;
    let mut ws = ws_from(HOST_B, bridge.addr, &[]).await.unwrap();
    // A text message that never ends: tungstenite gathers its fragments
    // without showing them to the session.
    let start = Frame::message(&b"{"[..], OpCode::Data(Data::Text), false);
    ws.feed(tungstenite::Message::Frame(start)).await.unwrap();
    for _ in 0..50 {
        let empty = Frame::message(&b""[..], OpCode::Data(Data::Continue), false);
        if ws.feed(tungstenite::Message::Frame(empty)).await.is_err() {
            break;
        }
    }
    let _ = ws.flush().await;
    assert_eq!(recv_close(&mut ws).await, 1008);
    let mut other = ws_from(HOST_C, bridge.addr, &[]).await.unwrap();
    gets_list(&mut other).await;
    bridge.shutdown().await;
    master.shutdown().await;
}

// What a host can make the bridge write to its log.

/// The value of the `/metrics` sample `name` (with its labels, as
/// rendered), or a panic naming it.
fn sample(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no sample {name} in:\n{metrics}"))
}

/// Counts `needle` in what arrived so far, keeping only a tail that may
/// hold the start of the next one.
fn count_and_trim(seen: &mut Vec<u8>, needle: &[u8]) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(at) = seen[from..].windows(needle.len()).position(|w| w == needle) {
        count += 1;
        from += at + needle.len();
    }
    let keep = from.max(seen.len().saturating_sub(needle.len() - 1));
    seen.drain(..keep);
    count
}

/// Sends `request` `times` times down one keep-alive connection from
/// `from` without waiting for answers (pipelined), and counts the answers
/// with `status`; returns once all arrived.
async fn pipelined(from: &str, to: SocketAddr, request: Vec<u8>, times: usize, status: u16) {
    let (mut rd, mut wr) = connect_from(from, to).await.into_split();
    let writer = tokio::spawn(async move {
        for _ in 0..times {
            wr.write_all(&request)
                .await
                .expect("the bridge stopped reading");
        }
        wr
    });
    let needle = format!("HTTP/1.1 {status} ");
    let (mut seen, mut answered, mut buf) = (Vec::new(), 0, vec![0u8; 1 << 16]);
    while answered < times {
        let n = tokio::time::timeout(HUNG, rd.read(&mut buf))
            .await
            .expect("answers stopped coming")
            .expect("read");
        assert!(n > 0, "closed after {answered} of {times} answers");
        seen.extend_from_slice(&buf[..n]);
        answered += count_and_trim(&mut seen, needle.as_bytes());
    }
    drop(writer.await);
}

/// An upgrade request to `to` with this raw `Origin` value.
fn upgrade_with_origin(to: SocketAddr, origin: &[u8]) -> Vec<u8> {
    let mut req = format!(
        "GET /ws HTTP/1.1\r\nHost: {to}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: "
    )
    .into_bytes();
    req.extend_from_slice(origin);
    req.extend_from_slice(b"\r\n\r\n");
    req
}

/// Floods that each cost one request or one WebSocket, from one host (the
/// shipped service logs at INFO): thousands of upgrades with an 8 KB foreign
/// `Origin` (before, 8 KB of log each: a gigabyte in seconds), sockets that
/// send bad JSON and then flood, sockets that send a message too big. The
/// log grows by a few lines, and `/metrics` counts every one.
#[tokio::test]
async fn floods_do_not_flood_the_log_and_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (_child, http, log_path) = logging_bridge(
        dir.path(),
        &[
            "--rate-limit",
            "1",
            "--rate-burst",
            "5",
            "--max-ws-per-address",
            "1000",
            "--max-http-per-address",
            "1000",
        ],
    )
    .await;
    let before = std::fs::metadata(&log_path).unwrap().len();
    let abuse_began = std::time::Instant::now();

    // 2 × 1,000 refused upgrades with an 8 KB foreign Origin, pipelined on
    // two keep-alive connections.
    let long = format!("http://evil.example/{}", "a".repeat(8192));
    let foreign = upgrade_with_origin(http, long.as_bytes());
    let (a, b) = tokio::join!(
        pipelined(HOST_B, http, foreign.clone(), 1000, 403),
        pipelined(HOST_B, http, foreign, 1000, 403),
    );
    let ((), ()) = (a, b);
    // 200 sockets that send bad JSON (refused, still within the rate) and
    // then flood until closed with 1008.
    for _ in 0..200 {
        let mut ws = ws_from(HOST_B, http, &[]).await.unwrap();
        for _ in 0..20 {
            if ws.send("{not json".into()).await.is_err() {
                break;
            }
        }
        assert_eq!(recv_close(&mut ws).await, 1008);
    }
    // 100 sockets that send a message over 64 KiB: closed with 1009.
    let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(70 * 1024));
    for _ in 0..100 {
        let mut ws = ws_from(HOST_B, http, &[]).await.unwrap();
        let _ = ws.send(big.as_str().into()).await;
        assert_eq!(recv_close(&mut ws).await, 1009);
    }

    let (grown, tail) = log_growth(&log_path, before);
    let budget = log_budget(2 * 1024, abuse_began);
    assert!(
        grown < budget,
        "2,300 refusals and closes grew the log by {grown} bytes (budget {budget})"
    );
    // The log still tells what happened, with the origin cut short.
    let origin_line = tail
        .lines()
        .find(|l| l.contains("foreign origin"))
        .expect("no line about the refused origins");
    assert!(origin_line.len() < 400, "{origin_line}");
    assert!(tail.contains("message flood"), "{tail}");

    // What the log leaves out, /metrics counts.
    let (status, _, body) = http_get(http, "/metrics", "").await;
    assert_eq!(status, 200);
    let metrics = String::from_utf8_lossy(&body);
    let refused = r#"bridge_upgrades_refused_total{status="403",reason="origin"}"#;
    assert_eq!(sample(&metrics, refused), 2000);
    let flood = r#"bridge_websockets_closed_total{reason="flood"}"#;
    assert_eq!(sample(&metrics, flood), 200);
    let big = r#"bridge_websockets_closed_total{reason="too-big"}"#;
    assert_eq!(sample(&metrics, big), 100);
    let bad_json = r#"bridge_refusals_total{code="invalid-json"}"#;
    assert_eq!(sample(&metrics, bad_json), 200 * 5);
}

#[tokio::test]
async fn an_origin_that_is_not_ascii_is_refused() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::start(test_config(master.addr)).await;
    let to = bridge.addr;
    // Before, an Origin that is not ASCII counted as none at all: allowed.
    for origin in [
        &b"http://\xffvil.example"[..],
        "http://\u{e9}vil.example".as_bytes(),
    ] {
        let mut s = connect_from(HOST_B, to).await;
        s.write_all(&upgrade_with_origin(to, origin)).await.unwrap();
        let mut head = vec![0u8; 12];
        tokio::time::timeout(HUNG, s.read_exact(&mut head))
            .await
            .expect("no answer")
            .unwrap();
        assert_eq!(&head, b"HTTP/1.1 403", "{}", String::from_utf8_lossy(&head));
    }
    assert_eq!(bridge.metrics.refused_origin.load(Relaxed), 2);
    // The page's own origin still opens a socket.
    let own = format!("http://{to}");
    let mut ws = ws_from(HOST_B, to, &[("Origin", &own)]).await.unwrap();
    gets_list(&mut ws).await;
    bridge.shutdown().await;
    master.shutdown().await;
}
