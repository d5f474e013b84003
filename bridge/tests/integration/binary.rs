//! The `bridge` binary in embedded-master mode: one command starts both,
//! prints one line on stdout, and stops cleanly on SIGTERM; a generated
//! token's sign-in link never goes to the log; the embedded master takes
//! the master's ban file, exempt networks and require-peer-address.

use crate::common;

use std::{net::SocketAddr, time::Duration};

use common::*;
use lobby_testkit::launch::AdminToken;
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    net::TcpStream,
};

/// The binary as these tests start it ([`bridge_launch`]), with a data
/// directory of its own out of the source tree, removed when the returned
/// guard drops (also when the test fails).
fn launch() -> (BridgeLaunch, tempfile::TempDir) {
    let data = tempfile::Builder::new()
        .prefix("bridge-bin-data-")
        .tempdir()
        .unwrap();
    let mut launch = bridge_launch();
    launch.data_dir = Some(data.path().to_owned());
    (launch, data)
}

#[tokio::test]
async fn embedded_master_mode() {
    let static_dir = tempfile::Builder::new()
        .prefix("bridge-bin-")
        .tempdir()
        .unwrap();
    let dir = static_dir.path().to_owned();
    std::fs::write(dir.join("index.html"), "<!doctype html>lobby").unwrap();
    std::fs::create_dir_all(dir.join("admin")).unwrap();
    std::fs::write(dir.join("admin/index.html"), "<!doctype html>admin").unwrap();
    let (mut launch, _data) = launch();
    launch.static_dir = Some(dir.clone());
    launch.poll_interval = Some(Duration::from_millis(100));
    let mut child = piped(&launch).spawn().unwrap();
    let (line, mut stdout) = first_line(&mut child).await;
    // "bridge listening on http://ADDR master ADDR"
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[..3], ["bridge", "listening", "on"], "{line}");
    assert_eq!(words[4], "master", "{line}");
    let http: SocketAddr = words[3].strip_prefix("http://").unwrap().parse().unwrap();
    let master: SocketAddr = words[5].parse().unwrap();

    // The embedded master speaks raw TCP...
    let mut game = game_server(master, "Embedded", 20000).await;
    let mut client = TcpStream::connect(master).await.unwrap();
    client
        .write_all(b"33{\"command\":\"msQueryGameServers\"}\n")
        .await
        .unwrap();
    let mut reply = vec![0u8; 4096];
    let n = tokio::time::timeout(HUNG, client.read(&mut reply))
        .await
        .unwrap()
        .unwrap();
    assert!(String::from_utf8_lossy(&reply[..n]).contains("msRQueryGameServers"));

    // ...and the bridge relays to it and serves the pages: the player's
    // (its facts after the doctype, as this page has no head), and at
    // /admin the admin's bundle.
    let (status, _, body) = http_get(http, "/", "").await;
    let body = String::from_utf8(body).unwrap();
    assert_eq!(status, 200);
    assert!(
        body.starts_with("<!doctype html><title>Lobby · game servers</title>")
            && body.ends_with("/>lobby"),
        "{body}"
    );
    let (status, _, body) = http_get(http, "/admin", "").await;
    assert_eq!(
        (status, body.as_slice()),
        (200, &b"<!doctype html>admin"[..])
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{http}/ws"))
        .await
        .unwrap();
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    let v = recv_until(&mut ws, |v| is_list(v) && names(v) == ["Embedded"]).await;
    assert_eq!(v["content"]["servers"][0]["port"], 20000);
    game.shutdown().await.unwrap();

    // SIGTERM: the socket closes with 1001 and the process exits 0 in time.
    signal(&child, "TERM").await;
    assert_eq!(recv_close(&mut ws).await, 1001);
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .expect("bridge did not exit within 5 s")
        .unwrap();
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).await.unwrap();
    assert!(rest.is_empty(), "stdout must hold one line only: {rest:?}");
}

#[tokio::test]
async fn taken_master_port_fails_with_advice() {
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (mut launch, _data) = launch();
    launch.embedded_master = taken.local_addr().unwrap();
    let out = tokio::time::timeout(HUNG, piped(&launch).output())
        .await
        .unwrap()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--master"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// Signs in with `token` on the bridge at `http`.
async fn signs_in(http: &str, token: &str) {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{http}/ws"))
        .await
        .unwrap();
    send(
        &mut ws,
        &format!(r#"{{"command":"bridgeAuth","content":{{"token":"{token}"}}}}"#),
    )
    .await;
    assert_eq!(recv_json(&mut ws).await["content"]["ok"], true);
}

/// Sends SIGTERM to `child` and waits for it to exit.
async fn terminate(child: &mut tokio::process::Child) {
    signal(child, "TERM").await;
    tokio::time::timeout(HUNG, child.wait())
        .await
        .expect("the bridge did not exit")
        .unwrap();
}

#[tokio::test]
async fn a_generated_tokens_link_goes_to_stdout_never_to_the_log() {
    let master = TestMaster::start().await;
    let (mut launch, _data) = launch();
    launch.admin_token = AdminToken::Generated;
    // Polled (`--master-feed off`): another test's master may have the
    // default feed port.
    launch.master = Some(master.addr);
    let mut child = piped(&launch).spawn().unwrap();
    let (line, mut stdout) = first_line(&mut child).await;
    let http = line
        .split_whitespace()
        .nth(3)
        .unwrap()
        .strip_prefix("http://")
        .unwrap()
        .to_owned();
    assert!(
        line.trim_end()
            .ends_with(&format!("master {}", master.addr)),
        "{line}"
    );
    // stdout is a stream of its own here (the log is stderr): the link
    // follows the readiness line.
    let mut link = String::new();
    tokio::time::timeout(HUNG, stdout.read_line(&mut link))
        .await
        .unwrap()
        .unwrap();
    let token = link
        .trim()
        .strip_prefix(&format!("admin page: http://{http}/admin#token="))
        .unwrap_or_else(|| panic!("not the admin link: {link:?}"))
        .to_owned();
    assert_eq!(token.len(), 32);
    signs_in(&http, &token).await;
    terminate(&mut child).await;
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .await
        .unwrap();
    assert!(log.contains("sign-in link is on stdout"), "{log}");
    assert!(!log.contains(&token), "the token is in the log:\n{log}");
}

#[tokio::test]
async fn a_generated_tokens_link_goes_to_a_private_file_when_stdout_is_the_log() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("bridge.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let (mut launch, _data) = launch();
    launch.admin_token = AdminToken::Generated;
    launch.data_dir = Some(dir.path().join("data"));
    launch.env = vec![
        ("TMPDIR".into(), dir.path().into()),
        ("NO_COLOR".into(), "1".into()),
    ];
    // Polled (`--master-feed off`): another test's master may have the
    // default feed port.
    launch.master = Some(master.addr);
    // One file for both streams, as a service manager's log would be.
    let mut child = piped(&launch)
        .env_remove("RUNTIME_DIRECTORY")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let link_path = dir
        .path()
        .join(format!("lobby-bridge-{}.admin-link", child.id().unwrap()));
    let logged = until("word of the link's file in the log", || {
        let text = std::fs::read_to_string(&log_path).unwrap();
        async move {
            if text.contains("sign-in link is in this file") {
                Ok(text)
            } else {
                Err("not yet")
            }
        }
    })
    .await;
    assert!(
        logged.contains(&format!("file={}", link_path.display())),
        "{logged}"
    );
    let link = std::fs::read_to_string(&link_path).expect("the link's file");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&link_path).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "the link's file is readable by others");
    let (http, token) = link
        .trim()
        .strip_prefix("http://")
        .and_then(|l| l.split_once("/admin#token="))
        .unwrap_or_else(|| panic!("not an admin link: {link:?}"));
    signs_in(http, token).await;
    terminate(&mut child).await;
    let logged = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        !logged.contains(token),
        "the token is in the log:\n{logged}"
    );
    assert!(!link_path.exists(), "the link's file outlived the bridge");
}

// The embedded master's flags.

/// The binary with its embedded master and `args`, its stderr lines on a
/// channel; returns it, its HTTP address and its master's address.
async fn start_embedded(
    args: &[&str],
) -> (
    tokio::process::Child,
    SocketAddr,
    SocketAddr,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (mut launch, _data) = launch();
    launch.env = vec![("NO_COLOR".into(), "1".into())];
    launch.args = args.iter().map(Into::into).collect();
    let mut child = piped(&launch).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut line = String::new();
        while stderr.read_line(&mut line).await.unwrap_or(0) > 0 {
            if tx.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    let (line, _stdout) = first_line(&mut child).await;
    let (http, master) = bridge_addrs(&line).unwrap_or_else(|e| panic!("{e}"));
    (child, http, master, rx)
}

/// Waits for a log line containing `needle`.
async fn logged(lines: &mut tokio::sync::mpsc::UnboundedReceiver<String>, needle: &str) {
    tokio::time::timeout(HUNG, async {
        while let Some(line) = lines.recv().await {
            if line.contains(needle) {
                return;
            }
        }
        panic!("the log ended without {needle:?}");
    })
    .await
    .unwrap_or_else(|_| panic!("no log line with {needle:?}"));
}

/// `json` as the master's framing has it.
fn framed(json: &str) -> Vec<u8> {
    format!("{}{json}\n", json.len() + 1).into_bytes()
}

/// A connection to the master from the loopback address `from`; `None`
/// if it was reset before `connect` returned (a refusal can be that fast).
async fn try_master_from(from: &str, master: SocketAddr) -> Option<TcpStream> {
    try_connect_from(from, master).await
}

/// A connection to the master from the loopback address `from`.
async fn master_from(from: &str, master: SocketAddr) -> TcpStream {
    try_master_from(from, master)
        .await
        .expect("the connection was reset at once")
}

/// Sends `msQueryGameServers` on `s`; the names listed, or `None` when the
/// master closes the connection instead of answering.
async fn listed(s: &mut TcpStream) -> Option<Vec<String>> {
    if s.write_all(&framed(r#"{"command":"msQueryGameServers"}"#))
        .await
        .is_err()
    {
        return None;
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    tokio::time::timeout(HUNG, async {
        loop {
            let digits = buf.iter().take_while(|b: &&u8| b.is_ascii_digit()).count();
            if digits > 0 && digits < buf.len() {
                let len: usize = std::str::from_utf8(&buf[..digits]).ok()?.parse().ok()?;
                if buf.len() >= digits + len {
                    let reply: serde_json::Value =
                        serde_json::from_slice(&buf[digits..digits + len]).unwrap();
                    return Some(names(&reply));
                }
            }
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await
    .expect("neither an answer nor a close")
}

/// A registration of `name` at `address`.
fn registration(name: &str, address: &str) -> String {
    format!(
        r#"{{"command":"msRegisterGameServer","content":{{"serverName":"{name}","serverAddress":"{address}","serverPort":20000}}}}"#
    )
}

#[tokio::test]
async fn the_embedded_master_refuses_banned_addresses_and_reloads_on_sighup() {
    let dir = tempfile::tempdir().unwrap();
    let bans = dir.path().join("bans.txt");
    std::fs::write(&bans, "127.0.0.2 test ban\n").unwrap();
    let (mut child, _, master, mut log) =
        start_embedded(&["--master-ban-file", bans.to_str().unwrap()]).await;
    logged(&mut log, "ban list loaded").await;
    if let Some(mut banned) = try_master_from("127.0.0.2", master).await {
        assert_eq!(
            listed(&mut banned).await,
            None,
            "a banned address was served"
        );
    }
    let mut other = master_from("127.0.0.3", master).await;
    assert_eq!(listed(&mut other).await, Some(vec![]));

    // SIGHUP reloads the file: 127.0.0.3 is banned now, and its open
    // connection is closed.
    std::fs::write(&bans, "127.0.0.3\n").unwrap();
    signal(&child, "HUP").await;
    logged(&mut log, "ban list reloaded").await;
    assert_eq!(listed(&mut other).await, None, "a newly banned peer stayed");
    if let Some(mut again) = try_master_from("127.0.0.3", master).await {
        assert_eq!(listed(&mut again).await, None);
    }
    let mut unbanned = master_from("127.0.0.2", master).await;
    assert_eq!(listed(&mut unbanned).await, Some(vec![]));
    terminate(&mut child).await;
}

#[tokio::test]
async fn the_embedded_master_requires_the_peer_address_and_exempts_networks() {
    let (mut child, _, master, _log) = start_embedded(&[
        "--master-require-peer-address",
        "--master-exempt",
        "127.0.0.4",
    ])
    .await;
    // A registration naming another address is discarded...
    let mut liar = master_from("127.0.0.2", master).await;
    liar.write_all(&framed(&registration("Elsewhere", "192.0.2.9")))
        .await
        .unwrap();
    assert_eq!(listed(&mut liar).await, Some(vec![]));
    // ...one naming its own is listed.
    let mut honest = master_from("127.0.0.3", master).await;
    honest
        .write_all(&framed(&registration("Here", "127.0.0.3")))
        .await
        .unwrap();
    assert_eq!(listed(&mut honest).await, Some(vec!["Here".to_owned()]));
    // The exempt address holds more than the per-address cap (32); the
    // others do not.
    let mut held = Vec::new();
    for _ in 0..40 {
        let mut s = master_from("127.0.0.4", master).await;
        assert!(listed(&mut s).await.is_some(), "an exempt peer was refused");
        held.push(s);
    }
    let mut served = 0;
    for _ in 0..40 {
        let Some(mut s) = try_master_from("127.0.0.5", master).await else {
            continue;
        };
        if listed(&mut s).await.is_some() {
            served += 1;
        }
        held.push(s);
    }
    assert_eq!(served, 32);
    terminate(&mut child).await;
}

/// A bridge given only `--master` follows that master's change feed, on
/// the master's host at the feed's default port (51964); with
/// `--master-feed off` it polls. The master and its feed listen on a
/// loopback address of their own, so the default port is free there.
#[tokio::test]
async fn a_bridge_given_master_follows_its_feed_by_default() {
    use master::feed::{FeedConfig, FeedServer};
    // The first of a few loopback addresses whose feed port is free.
    let mut bound = None;
    for last in 28..40u8 {
        let ip = std::net::Ipv4Addr::new(127, 0, 0, last);
        let at = SocketAddr::from((ip, protocol::feed::DEFAULT_PORT));
        if let Ok(l) = tokio::net::TcpListener::bind(at).await {
            bound = Some((ip, l));
            break;
        }
    }
    let (ip, feed_listener) = bound.expect("a loopback address with the feed port free");
    let master = TestMaster::start_on(SocketAddr::from((ip, 0))).await;
    let feed = FeedServer::new(master.master.registry(), FeedConfig::default());
    let stop = tokio_util::sync::CancellationToken::new();
    let (f, s) = (feed.clone(), stop.clone());
    let feed_task = tokio::spawn(async move { f.run(feed_listener, s.cancelled_owned()).await });

    let dir = tempfile::tempdir().unwrap();
    let start = |feed: MasterFeed| {
        let (mut launch, _data) = launch();
        launch.data_dir = Some(dir.path().join("data"));
        launch.master = Some(master.addr);
        launch.master_feed = feed;
        launch.poll_interval = Some(Duration::from_millis(100));
        piped(&launch).spawn().unwrap()
    };
    let feed_up = |http: SocketAddr| async move {
        let (_, _, body) = http_get(http, "/metrics", "").await;
        let text = String::from_utf8_lossy(&body).into_owned();
        let line = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_owned())
        };
        (
            line("bridge_master_feed_up "),
            line("bridge_master_queries_total "),
        )
    };
    for (feed, follows) in [(MasterFeed::Default, true), (MasterFeed::Off, false)] {
        let mut child = start(feed);
        let (http, _stdout) = readiness(&mut child).await;
        if follows {
            until(
                "the bridge following the feed at the master's host, port 51964",
                || async {
                    match feed_up(http).await.0 {
                        Some(up) if up == "1" => Ok(()),
                        other => Err(format!("bridge_master_feed_up {other:?}")),
                    }
                },
            )
            .await;
        } else {
            // Polls: its queries go up (every 100 ms), the feed stays down.
            until("the bridge polling with --master-feed off", || async {
                let (up, queries) = feed_up(http).await;
                assert_eq!(up.as_deref(), Some("0"), "--master-feed off");
                match queries.and_then(|q| q.parse::<u64>().ok()) {
                    Some(q) if q >= 3 => Ok(()),
                    other => Err(format!("bridge_master_queries_total {other:?}")),
                }
            })
            .await;
        }
        terminate(&mut child).await;
    }
    stop.cancel();
    let _ = feed_task.await;
    master.shutdown().await;
}
