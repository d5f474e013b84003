//! Test helpers over the `bridge` and `master` libraries: an in-process
//! master and bridge on port 0, WebSocket clients and the bridge binary
//! under abuse. What does not need those libraries (waits, `/metrics`,
//! loopback HTTP) is the test kit's, `lobby_testkit`; every wait is
//! bounded only by its [`HUNG`].
#![allow(dead_code)]

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use bridge::{metrics::Metrics, AdminToken, Bridge, Config};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    process::Command,
    task::JoinHandle,
};
use tokio_tungstenite::{
    tungstenite::{client::IntoClientRequest, protocol::CloseFrame, Message},
    MaybeTlsStream, WebSocketStream,
};
use tokio_util::sync::CancellationToken;

pub use lobby_testkit::{
    launch::{bridge_addrs, Bridge as LaunchedBridge, BridgeLaunch, MasterFeed},
    process::Proc,
    procfs,
};

pub use lobby_testkit::{
    bounded,
    metrics::{metric, metric_reaches},
    until, until_blocking, until_true, HUNG,
};

pub const TOKEN: &str = "test-admin-token";

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub struct TestMaster {
    pub addr: SocketAddr,
    pub master: master::Master,
    pub stop: CancellationToken,
    pub task: JoinHandle<()>,
}

impl TestMaster {
    pub async fn start() -> Self {
        Self::start_on("127.0.0.1:0".parse().unwrap()).await
    }

    pub async fn start_on(addr: SocketAddr) -> Self {
        let listener = TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let master = master::Master::new(master::Config {
            // The tests play many game servers and clients from loopback.
            exempt: vec!["127.0.0.0/8".parse().unwrap()],
            ..master::Config::default()
        });
        let stop = CancellationToken::new();
        let m = master.clone();
        let s = stop.clone();
        let task = tokio::spawn(async move {
            m.run(listener, s.cancelled_owned())
                .await
                .expect("the test master's configuration is valid")
        });
        Self {
            addr,
            master,
            stop,
            task,
        }
    }

    pub fn queries(&self) -> u64 {
        self.master.registry().queries_answered()
    }

    pub async fn shutdown(self) {
        self.stop.cancel();
        bounded("the master's shutdown", self.task).await.unwrap();
    }
}

pub struct TestBridge {
    pub addr: SocketAddr,
    pub metrics: Arc<Metrics>,
    pub stop: CancellationToken,
    pub task: JoinHandle<Result<(), bridge::Error>>,
}

/// A config with short intervals, for a master at `master`.
pub fn test_config(master: SocketAddr) -> Config {
    let mut c = Config::new(master.to_string(), AdminToken::new(TOKEN).unwrap());
    c.poll_interval = Duration::from_millis(100);
    c.reconnect_min = Duration::from_millis(20);
    c.reconnect_max = Duration::from_millis(200);
    c.master_timeout = Duration::from_secs(2);
    c.close_wait = Duration::from_millis(100);
    c.static_dir = std::env::temp_dir().join("bridge-tests-no-such-dir");
    // Every test client comes from loopback: only the tests of the
    // per-address budget (egress.rs) keep it low.
    c.api_rate_per_sec = 1_000_000;
    c.api_burst = 1_000_000;
    c
}

impl TestBridge {
    pub async fn start(config: Config) -> Self {
        Self::start_bridge(Bridge::new(config).expect("the bridge opens its database")).await
    }

    /// A bridge in front of `master` as if it ran in the same process:
    /// the registry's changes are pushed, never polled.
    pub async fn embedding(master: &TestMaster, config: Config) -> Self {
        let bridge = Bridge::embedding(config, master.master.registry());
        Self::start_bridge(bridge.expect("the bridge opens its database")).await
    }

    async fn start_bridge(bridge: Bridge) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let metrics = bridge.metrics();
        let stop = CancellationToken::new();
        let s = stop.clone();
        let task = tokio::spawn(async move { bridge.run(listener, s.cancelled_owned()).await });
        Self {
            addr,
            metrics,
            stop,
            task,
        }
    }

    pub async fn with_master(master: &TestMaster) -> Self {
        Self::start(test_config(master.addr)).await
    }

    pub fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    pub async fn connect(&self) -> Ws {
        let (ws, _) = bounded("a WebSocket", tokio_tungstenite::connect_async(self.url()))
            .await
            .unwrap();
        ws
    }

    /// Connects with an `Origin` header; returns the HTTP status of a refusal.
    pub async fn connect_with_origin(&self, origin: &str) -> Result<Ws, u16> {
        let mut req = self.url().into_client_request().unwrap();
        req.headers_mut().insert("Origin", origin.parse().unwrap());
        match bounded("a WebSocket", tokio_tungstenite::connect_async(req)).await {
            Ok((ws, _)) => Ok(ws),
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => Err(resp.status().as_u16()),
            Err(e) => panic!("unexpected error {e}"),
        }
    }

    /// A connection subscribed to deltas (`bridgeSnapshot`, then
    /// `bridgeDelta`s).
    pub async fn subscribe_deltas(&self) -> Ws {
        let mut ws = self.connect().await;
        send(
            &mut ws,
            r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#,
        )
        .await;
        ws
    }

    /// Waits until `bridge_master_feed_up` is `up` (1: following the
    /// master's change feed).
    pub async fn wait_feed_up(&self, up: i64) {
        let feed_up = &self.metrics.master_feed_up;
        lobby_testkit::until_true(&format!("bridge_master_feed_up {up}"), || {
            feed_up.load(std::sync::atomic::Ordering::Relaxed) == up
        })
        .await;
    }

    /// A connection that is already an admin.
    pub async fn admin(&self) -> Ws {
        let mut ws = self.connect().await;
        send(
            &mut ws,
            &format!(r#"{{"command":"bridgeAuth","content":{{"token":"{TOKEN}"}}}}"#),
        )
        .await;
        let reply = recv_json(&mut ws).await;
        assert_eq!(reply["content"]["ok"], true, "{reply}");
        ws
    }

    pub async fn shutdown(self) {
        self.stop.cancel();
        bounded("the bridge's shutdown", self.task)
            .await
            .unwrap()
            .unwrap();
    }
}

pub async fn send(ws: &mut Ws, text: &str) {
    ws.send(Message::text(text)).await.unwrap();
}

/// The next text message, skipping pings and pongs.
pub async fn recv_text(ws: &mut Ws) -> String {
    loop {
        let msg = bounded("a message", ws.next())
            .await
            .expect("stream ended")
            .expect("read failed");
        match msg {
            Message::Text(t) => return t.to_string(),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("expected text, got {other:?}"),
        }
    }
}

pub async fn recv_json(ws: &mut Ws) -> Value {
    serde_json::from_str(&recv_text(ws).await).unwrap()
}

/// Waits for a message satisfying `pred`, skipping others.
pub async fn recv_until(ws: &mut Ws, pred: impl Fn(&Value) -> bool) -> Value {
    bounded("a matching message", async {
        loop {
            let v = recv_json(ws).await;
            if pred(&v) {
                return v;
            }
        }
    })
    .await
}

/// Reads until the close frame; returns its code.
pub async fn recv_close(ws: &mut Ws) -> u16 {
    bounded("a close frame", async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(Some(CloseFrame { code, .. })))) => return u16::from(code),
                Some(Ok(Message::Close(None))) => panic!("close without code"),
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    })
    .await
}

/// Server names in an `msRQueryGameServers` message.
pub fn names(v: &Value) -> Vec<String> {
    assert_eq!(v["command"], "msRQueryGameServers", "{v}");
    v["content"]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

pub fn is_list(v: &Value) -> bool {
    v["command"] == "msRQueryGameServers"
}

/// A game server's stats update with `current` of 4 players, the lobby
/// open or not: the line the tests' game servers send.
pub fn stats_json(current: impl std::fmt::Display, open: bool) -> String {
    format!(
        r#"{{"command":"msUpdateGameServerStats","content":{{"players":{{"current":{current},"max":4}},"isLobbyOpen":{open},"gameplayMode":1}}}}"#
    )
}

pub fn register_json(name: &str, port: u16) -> String {
    format!(
        r#"{{"command":"msRegisterGameServer","content":{{"serverName":"{name}","serverAddress":"192.168.0.10","serverPort":{port}}}}}"#
    )
}

/// A game server speaking raw TCP to the master; registered while it lives.
pub async fn game_server(master: SocketAddr, name: &str, port: u16) -> TcpStream {
    let mut s = TcpStream::connect(master).await.unwrap();
    let json = register_json(name, port);
    s.write_all(format!("{}{json}\n", json.len() + 1).as_bytes())
        .await
        .unwrap();
    s
}

/// Waits until the master's registry has `n` servers.
pub async fn wait_registered(master: &TestMaster, n: usize) {
    let registry = master.master.registry();
    lobby_testkit::until_true(&format!("{n} servers registered"), || registry.len() == n).await;
}

/// A plain HTTP/1.1 GET; returns status, raw head and body.
pub async fn http_get(addr: SocketAddr, path: &str, extra: &str) -> (u16, String, Vec<u8>) {
    let here = IpAddr::V4(Ipv4Addr::LOCALHOST);
    http_request(here, addr, "GET", path, extra).await
}

/// A plain HTTP/1.1 request without a body from the client address
/// `from` (a loopback address); returns status, raw head and body.
pub async fn http_request(
    from: IpAddr,
    addr: SocketAddr,
    method: &str,
    path: &str,
    extra: &str,
) -> (u16, String, Vec<u8>) {
    http_send(from, addr, method, path, extra, "").await
}

/// [`http_request`] with `body` (sent as it is, with its length).
pub async fn http_send(
    from: IpAddr,
    addr: SocketAddr,
    method: &str,
    path: &str,
    extra: &str,
    body: &str,
) -> (u16, String, Vec<u8>) {
    let a = lobby_testkit::http::request(from, addr, method, path, extra, body.as_bytes())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (a.status, a.head, a.body)
}

/// The `bridge` binary as the kit's launcher starts it for these tests:
/// [`TOKEN`] as its admin token and otherwise its own defaults (an
/// embedded master on port 0, no `--static`); a test sets what differs.
pub fn bridge_launch() -> BridgeLaunch {
    let mut launch = BridgeLaunch::plain(env!("CARGO_BIN_EXE_bridge").into());
    launch.admin_token = lobby_testkit::launch::AdminToken::Env(TOKEN.into());
    launch
}

/// Starts `launch` with its output in `log` and waits until it serves.
pub async fn start_bridge(launch: BridgeLaunch, log: std::path::PathBuf) -> LaunchedBridge {
    lobby_testkit::launch::blocking("the bridge", move || launch.start(&log))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `launch`'s command line as a child of this test, stdin closed, stdout
/// and stderr piped, killed on drop: for a test of what the process
/// itself prints (set other streams before spawning).
pub fn piped(launch: &BridgeLaunch) -> Command {
    let mut cmd = Command::from(launch.command());
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// The first line `child` prints on its piped stdout (empty if it exits
/// first), and the rest of its stdout.
pub async fn first_line(
    child: &mut tokio::process::Child,
) -> (String, tokio::io::BufReader<tokio::process::ChildStdout>) {
    use tokio::io::AsyncBufReadExt;
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut line = String::new();
    bounded("the first line on stdout", stdout.read_line(&mut line))
        .await
        .expect("stdout readable");
    (line, stdout)
}

/// Sends `signal` (`"TERM"`, `"HUP"`) to `child` with kill(1): the
/// product crates forbid unsafe code, their tests too.
pub async fn signal(child: &tokio::process::Child, signal: &str) {
    let pid = child.id().expect("the child runs").to_string();
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .await
        .expect("kill(1) runs");
    assert!(sent.success(), "kill -{signal} {pid} failed");
}

/// The HTTP address a `bridge` process prints on its first stdout line
/// ("bridge listening on http://ADDR master ADDR"), and the rest of its
/// stdout.
pub async fn readiness(
    child: &mut tokio::process::Child,
) -> (
    SocketAddr,
    tokio::io::BufReader<tokio::process::ChildStdout>,
) {
    let (line, stdout) = first_line(child).await;
    let (http, _) = bridge_addrs(&line).unwrap_or_else(|e| panic!("{e}"));
    (http, stdout)
}

/// A TCP connection to `to` from the loopback address `from` (127.0.0.2
/// and the rest of 127.0.0.0/8 route to lo on Linux): another host, for
/// the rules that count per address; `None` if it was reset before
/// `connect` returned (a refusal can be that fast).
pub async fn try_connect_from(from: &str, to: SocketAddr) -> Option<TcpStream> {
    lobby_testkit::http::connect_from(from.parse().unwrap(), to)
        .await
        .ok()
}

/// [`try_connect_from`] that must succeed.
pub async fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
    try_connect_from(from, to).await.expect("connect failed")
}

/// A GET of `path` on the bridge: its status and JSON (`Null` if none).
pub async fn get_json(bridge: &TestBridge, path: &str) -> (u16, Value) {
    let (status, _, body) = http_get(bridge.addr, path, "").await;
    let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
    (status, v)
}

/// The bridge's configuration for `master` with its data in `dir` and a
/// history sample every second.
pub fn history_config(master: &TestMaster, dir: &std::path::Path) -> Config {
    let mut c = test_config(master.addr);
    c.data_dir = Some(dir.to_owned());
    c.history_interval = Duration::from_secs(1);
    c
}

/// The listed servers' `(name, key)`, once `n` are listed; every key is
/// 16 hex digits.
pub async fn listed_keys(bridge: &TestBridge, n: usize) -> Vec<(String, String)> {
    let v = until_json(bridge, "/api/servers", |s, _, v| {
        s == 200
            && v["servers"]
                .as_array()
                .is_some_and(|a| a.len() == n && a.iter().all(|e| e["key"].is_string()))
    })
    .await;
    v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let key = s["key"].as_str().expect("every entry has a key").to_owned();
            assert_eq!(key.len(), 16);
            assert!(key
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            (s["name"].as_str().unwrap().to_owned(), key)
        })
        .collect()
}

/// The key of the listed server `name`, once listed.
pub async fn key_of(bridge: &TestBridge, name: &str) -> String {
    let v = until_json(bridge, "/api/servers", |_, _, v| {
        v["servers"]
            .as_array()
            .is_some_and(|a| a.iter().any(|s| s["name"] == name))
    })
    .await;
    let servers = v["servers"].as_array().unwrap();
    let s = servers.iter().find(|s| s["name"] == name).unwrap();
    s["key"].as_str().unwrap().to_owned()
}

/// Polls `path` until `ok` holds of its answer's status, head and JSON.
pub async fn until_json(
    bridge: &TestBridge,
    path: &str,
    ok: impl Fn(u16, &str, &Value) -> bool,
) -> Value {
    lobby_testkit::until(&format!("{path} as expected"), || async {
        let a = lobby_testkit::http::get(bridge.addr, path, "").await?;
        let v = a.json();
        if ok(a.status, &a.head, &v) {
            Ok(v)
        } else {
            Err(format!("{} {v}", a.status))
        }
    })
    .await
}

/// The bridge binary with an embedded master (both on port 0) and `args`,
/// serving `dir`, logging at INFO into `dir/bridge.log`, started and
/// ready: the process, its HTTP address and the log's path.
pub async fn logging_bridge(
    dir: &std::path::Path,
    args: &[&str],
) -> (Proc, SocketAddr, std::path::PathBuf) {
    let log_path = dir.join("bridge.log");
    let mut launch = bridge_launch();
    launch.static_dir = Some(dir.to_owned());
    launch.args = args.iter().map(Into::into).collect();
    let bridge = start_bridge(launch, log_path.clone()).await;
    (bridge.proc, bridge.http, log_path)
}

/// What the log at `path` gained since it was `before` bytes long: its
/// size in bytes and its text (the first 4 KiB printed, for the record).
/// The most a log may grow over an abuse that began at `since`, at
/// `per_window` bytes per throttle window: throttled logging prints at
/// most a line per call site and window (`master::logtext::WINDOW`), so
/// a slow machine, on which the same abuse spans more windows, may print
/// more lines, never more per window. A run spans the windows its length
/// covers and one more, which it began in the middle of.
pub fn log_budget(per_window: u64, since: std::time::Instant) -> u64 {
    let window = master::logtext::WINDOW.as_millis();
    let spanned = since.elapsed().as_millis().div_ceil(window).max(1) + 1;
    per_window * u64::try_from(spanned).unwrap()
}

pub fn log_growth(path: &std::path::Path, before: u64) -> (u64, String) {
    let grown = std::fs::metadata(path).unwrap().len() - before;
    let text = std::fs::read_to_string(path).unwrap();
    let tail = text[usize::try_from(before).unwrap()..].to_owned();
    eprintln!(
        "the log grew by {grown} bytes:\n{}",
        tail.get(..4096).unwrap_or(&tail)
    );
    (grown, tail)
}

/// An HTTP client for a test's requests to a bridge, from `from` (a
/// loopback address) or the default one. It drops a pooled connection
/// after 20 s idle, well before the bridge closes one (its idle timeout,
/// 60 s by default): a request sent on a connection the bridge is closing
/// at that moment fails with "connection closed before message
/// completed" (hyper's known race), which a slow run, waiting long between
/// two requests, would otherwise hit.
pub fn http_client(from: Option<&str>) -> reqwest::Client {
    let builder = reqwest::Client::builder()
        .no_proxy()
        .pool_idle_timeout(Duration::from_secs(20));
    match from {
        Some(from) => builder.local_address(
            from.parse::<std::net::IpAddr>()
                .expect("a loopback address"),
        ),
        None => builder,
    }
    .build()
    .expect("a test's HTTP client")
}

/// An embedded master and a bridge that decides events from its list,
/// for the notifiers' tests (webhooks, Web Push): game servers come and
/// go, and the events task's progress is read from `/metrics`.
pub struct Watching {
    pub master: TestMaster,
    pub bridge: TestBridge,
    pub http: reqwest::Client,
}

impl Watching {
    /// The product with keys offline after `grace`, its config changed by
    /// `configure`, once servers that appear are announced.
    pub async fn start(grace: Duration, configure: impl FnOnce(&mut Config)) -> Self {
        let master = TestMaster::start().await;
        let mut c = test_config(master.addr);
        c.offline_after = grace;
        configure(&mut c);
        let bridge = TestBridge::embedding(&master, c).await;
        let watching = Self {
            master,
            bridge,
            http: http_client(None),
        };
        // Servers that appear in the first grace are not announced.
        watching.until_metric("bridge_watch_warm", |v| v == 1).await;
        watching
    }

    /// A counter or gauge of the bridge's `/metrics` (whole numbers).
    pub async fn metric(&self, name: &str) -> u64 {
        metric(self.bridge.addr, name).await as u64
    }

    pub async fn until_metric(&self, name: &str, ok: impl Fn(u64) -> bool) -> u64 {
        lobby_testkit::metrics::until_metric(self.bridge.addr, name, |v| ok(v as u64)).await as u64
    }

    /// The key of the listed server `name`.
    pub async fn key_of(&self, name: &str) -> String {
        key_of(&self.bridge, name).await
    }

    /// Sends a stats update and waits until the events were decided from
    /// a list that holds it.
    pub async fn stats(&self, server: &mut TcpStream, current: u32, open: bool) {
        let seq = self.metric("bridge_watch_list_seq").await;
        let json = stats_json(current, open);
        server
            .write_all(format!("{}{json}\n", json.len() + 1).as_bytes())
            .await
            .unwrap();
        self.until_metric("bridge_watch_list_seq", |s| s > seq)
            .await;
    }

    pub async fn shutdown(self) {
        self.bridge.shutdown().await;
        self.master.shutdown().await;
    }
}

/// A second loopback address: abuse from it is told apart from the
/// tests' own requests.
pub const OTHER_HOST: &str = "127.0.0.2";

/// One request from `from`: its head, then (once answered, if
/// `early`, else at the same time) its body; the answer's status (`None`:
/// the connection closed first, as when the bridge stops reading a body).
pub async fn request_from(
    from: &str,
    to: SocketAddr,
    head: &str,
    body: &[u8],
    early: bool,
) -> Option<u16> {
    let mut s = connect_from(from, to).await;
    let (mut rd, mut wr) = s.split();
    let mut answer = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            match rd.read(&mut buf).await {
                Ok(n) if n > 0 => answer.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
    };
    let _ = wr.write_all(head.as_bytes()).await;
    bounded("an answer", async {
        if early {
            read.await;
            let _ = wr.write_all(body).await;
        } else {
            let send = async {
                let _ = wr.write_all(body).await;
            };
            tokio::join!(send, read);
        }
    })
    .await;
    String::from_utf8_lossy(&answer)
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
}

/// Resident memory of process `pid` now, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    procfs::rss_kib(pid).unwrap_or_else(|e| panic!("{e}"))
}

/// Peak resident memory of process `pid`, in KiB.
pub fn peak_rss_kib(pid: u32) -> u64 {
    procfs::peak_rss_kib(pid).unwrap_or_else(|e| panic!("{e}"))
}

/// CPU time (user and system) process `pid` has used.
pub fn cpu_of(pid: u32) -> Duration {
    procfs::cpu_time(pid).unwrap_or_else(|e| panic!("{e}"))
}

/// The bridge binary for an abuse test from [`OTHER_HOST`]: its `/api/`
/// budget and per-address connections lifted (so every request reaches
/// the handler under test), its data in `dir`, `extra` flags; and its log
/// size and resident memory when the abuse starts.
pub struct Abused {
    pub child: Proc,
    pub http: SocketAddr,
    log_path: std::path::PathBuf,
    log_before: u64,
    rss_before: u64,
    marked_at: std::time::Instant,
}

impl Abused {
    pub async fn start(dir: &std::path::Path, extra: &[&str]) -> Self {
        let data = dir.join("data");
        let mut args = vec![
            "--api-rate",
            "100000",
            "--api-burst",
            "100000",
            "--max-http-per-address",
            "1000",
            "--data-dir",
            data.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (child, http, log_path) = logging_bridge(dir, &args).await;
        let mut abused = Self {
            child,
            http,
            log_path,
            log_before: 0,
            rss_before: 0,
            marked_at: std::time::Instant::now(),
        };
        abused.mark();
        abused
    }

    /// Takes the log's size and the memory from now on.
    pub fn mark(&mut self) {
        self.log_before = std::fs::metadata(&self.log_path).unwrap().len();
        self.rss_before = rss_kib(self.child.pid());
        self.marked_at = std::time::Instant::now();
    }

    /// Asserts that `what` grew the log by less than 1 KiB per throttle
    /// window it spanned ([`log_budget`]) and the bridge's memory by less
    /// than 32 MiB; the log's new text.
    pub fn assert_small_growth(&self, what: &str) -> String {
        let (grown, tail) = log_growth(&self.log_path, self.log_before);
        let budget = log_budget(1024, self.marked_at);
        assert!(
            grown < budget,
            "{what} grew the log by {grown} bytes (budget {budget})"
        );
        let rss_after = rss_kib(self.child.pid());
        let rss_before = self.rss_before;
        eprintln!("bridge RSS {rss_before} KiB before, {rss_after} KiB after");
        assert!(
            rss_after < rss_before + 32 * 1024,
            "RSS grew from {rss_before} to {rss_after} KiB"
        );
        tail
    }
}
