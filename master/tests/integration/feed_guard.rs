//! The `master` executable's change feed under a hostile subscriber on
//! 127.0.0.2: 2,000 subscribes, each naming an epoch of 60 KB, cost the
//! log little (target ≤ 1 MB); the host holds no more than its own few
//! connections (subscribed or silent), and a bridge from 127.0.0.1 still
//! subscribes meanwhile.

use crate::common;

use std::{
    net::SocketAddr,
    process::Stdio,
    sync::{
        atomic::{AtomicU64, Ordering::Relaxed},
        Arc,
    },
    time::Duration,
};

use common::HUNG;
use lobby_testkit::launch::{FeedListen, MasterLaunch};
use master::feed::FeedConfig;
use protocol::{delta::Resume, feed::FeedSubscribe, frame::frame};
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    net::{TcpSocket, TcpStream},
    process::{Child, Command},
};

const HOSTILE: &str = "127.0.0.2";

/// The master binary with its feed on an ephemeral loopback port; its log
/// (stdout and stderr) counted.
struct Master {
    child: Child,
    feed: SocketAddr,
    log_bytes: Arc<AtomicU64>,
    /// The tasks reading its pipes: they end when the process is gone.
    readers: Vec<tokio::task::JoinHandle<()>>,
}

impl Master {
    async fn start() -> Self {
        let launch = MasterLaunch {
            feed: FeedListen::At(SocketAddr::from(([127, 0, 0, 1], 0))),
            exempt_loopback: false,
            ..MasterLaunch::new(env!("CARGO_BIN_EXE_master").into())
        };
        let mut child = Command::from(launch.command())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut feed = None;
        let mut line = String::new();
        while feed.is_none() {
            line.clear();
            tokio::time::timeout(HUNG, stdout.read_line(&mut line))
                .await
                .unwrap()
                .unwrap();
            feed = line
                .trim()
                .strip_prefix("master feed listening on ")
                .map(|a| a.parse::<SocketAddr>().unwrap());
        }
        let log_bytes = Arc::new(AtomicU64::new(0));
        let stderr = child.stderr.take().unwrap();
        let mut readers = Vec::new();
        for mut pipe in [
            Box::new(stdout) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
            Box::new(stderr),
        ] {
            let bytes = log_bytes.clone();
            readers.push(tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                    bytes.fetch_add(n as u64, Relaxed);
                }
            }));
        }
        Self {
            child,
            feed: feed.unwrap(),
            log_bytes,
            readers,
        }
    }
}

/// A connection from `from`; `None` when the master refused it at once
/// (a reset can come before the connect returns).
async fn connect_from(from: &str, to: SocketAddr) -> Option<TcpStream> {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(from.parse().unwrap(), 0))
        .unwrap();
    socket.connect(to).await.ok()
}

/// Reads until the first frame's end (a newline) or until the master
/// closes; returns whether a frame came.
async fn first_frame(s: &mut TcpStream) -> bool {
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = Vec::new();
    loop {
        match tokio::time::timeout(HUNG, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return false,
            Ok(Ok(n)) => {
                got.extend_from_slice(&buf[..n]);
                if got.contains(&b'\n') {
                    return true;
                }
            }
        }
    }
}

fn subscribe(epoch: &str) -> Vec<u8> {
    frame(
        FeedSubscribe {
            token: None,
            resume: Some(Resume {
                epoch: epoch.to_owned(),
                since: 1,
            }),
            heartbeat_ms: None,
        }
        .to_json()
        .as_bytes(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_subscriber_neither_floods_the_log_nor_takes_the_slots() {
    let mut master = Master::start().await;
    let per_address = FeedConfig::DEFAULT_MAX_PER_ADDRESS;

    // The host holds what it can: silent connections (they never
    // subscribe) and subscribers, many more than its cap.
    let mut held = Vec::new();
    for i in 0..FeedConfig::DEFAULT_MAX_SUBSCRIBERS + 8 {
        let Some(mut s) = connect_from(HOSTILE, master.feed).await else {
            continue;
        };
        if i % 2 == 0 {
            let _ = s.write_all(&subscribe("e")).await;
        }
        held.push(s);
    }
    // Past its cap they are closed at once; those within it stay.
    let mut open = 0;
    for s in &mut held {
        let mut byte = [0u8; 1];
        match tokio::time::timeout(Duration::from_millis(200), s.read(&mut byte)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {}
            _ => open += 1,
        }
    }
    eprintln!("[feed guard] 127.0.0.2 holds {open} feed connections");
    assert!(open <= per_address, "one host holds {open} connections");

    // A bridge elsewhere still subscribes, and is sent the list.
    let mut bridge = connect_from("127.0.0.1", master.feed)
        .await
        .expect("a bridge elsewhere connects");
    bridge.write_all(&subscribe("other")).await.unwrap();
    assert!(
        first_frame(&mut bridge).await,
        "a bridge from another address was not served"
    );

    // 2,000 subscribes naming an epoch of 60 KB each, from the hostile
    // host, with the connections it holds given back first.
    drop(held);
    let epoch = "E".repeat(60_000);
    let message = subscribe(&epoch);
    let started = std::time::Instant::now();
    let mut served = 0;
    for _ in 0..2_000 {
        let Some(mut s) = connect_from(HOSTILE, master.feed).await else {
            continue;
        };
        if s.write_all(&message).await.is_ok() && first_frame(&mut s).await {
            served += 1;
        }
    }
    let elapsed = started.elapsed();
    // Everything it logged, read to the pipes' end.
    let _ = master.child.start_kill();
    let _ = master.child.wait().await;
    for r in master.readers {
        let _ = tokio::time::timeout(HUNG, r).await;
    }
    let log = master.log_bytes.load(Relaxed);
    eprintln!(
        "[feed guard] 2,000 subscribes with a 60 KB epoch in {:.1} s ({served} served): master log {log} bytes in all",
        elapsed.as_secs_f64()
    );
    assert!(served > 0, "the hostile subscribes were all refused");
    assert!(log <= 1_000_000, "the master logged {log} bytes");
}
