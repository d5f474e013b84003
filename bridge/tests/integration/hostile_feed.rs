//! A hostile master behind `--master` and its change feed, on 127.0.0.2,
//! against the real `bridge` binary: names of a million characters, a
//! list past the bound of a polled reply, 170,000 entries in descending id
//! order, and an epoch that never matches. Each phase runs its own bridge
//! process and prints what it cost (log bytes, peak RSS, CPU, the largest
//! `/api/servers`); the asserts are the targets (log ≤ 1 MB, RSS ≤ 256
//! MB, `/api/servers` ≤ 16 MiB) and, for the CPU of 170,000 reversed
//! entries (≤ 2 s in a release build), a generous bound.

use crate::common;

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed},
        Arc, Mutex,
    },
    time::Duration,
};

use common::HUNG;
use lobby_testkit::fake_master::{Answer, FakeMaster};
use protocol::frame::frame;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    process::Child,
    sync::{Notify, Semaphore},
    task::JoinHandle,
};

/// Where the hostile master listens: another loopback address than the
/// bridge's.
const HOSTILE: &str = "127.0.0.2";

/// What the hostile feed does for each subscriber, in order, after its
/// subscribe; then it holds the connection (reading until it closes).
type Script = Arc<Mutex<Vec<Step>>>;

/// One step of a [`Script`].
#[derive(Clone)]
enum Step {
    /// Writes these bytes.
    Write(Vec<u8>),
    /// Writes nothing more until the test lets it ([`HostileMaster::go`]).
    Hold,
}

impl Step {
    /// The bytes it writes.
    fn len(&self) -> usize {
        match self {
            Step::Write(bytes) => bytes.len(),
            Step::Hold => 0,
        }
    }
}

/// The hostile master: a "master" port that answers every query with an
/// empty list (so the bridge's polling works), and a feed port that
/// writes the current [`Script`] to every subscriber.
struct HostileMaster {
    master: FakeMaster,
    feed: SocketAddr,
    script: Script,
    /// Feed connections that the bridge closed (it gave up on the feed).
    closed: Arc<AtomicUsize>,
    closed_signal: Arc<Notify>,
    subscribes: Arc<AtomicUsize>,
    /// Lets a subscriber's script past its [`Step::Hold`].
    gate: Arc<Semaphore>,
    tasks: Vec<JoinHandle<()>>,
}

impl HostileMaster {
    async fn start(script: Vec<Step>) -> Self {
        // The "master" side: an empty list for every query (so polling
        // works), from the kit's fake master.
        let empty = lobby_testkit::fake_master::list_reply(&[]);
        let master = FakeMaster::start(HOSTILE.parse().unwrap(), move |_| {
            Answer::Write(lobby_testkit::fake_master::frame(&empty))
        })
        .await;
        let feed_listener = TcpListener::bind((HOSTILE, 0)).await.unwrap();
        let feed = feed_listener.local_addr().unwrap();
        let script: Script = Arc::new(Mutex::new(script));
        let closed = Arc::new(AtomicUsize::new(0));
        let closed_signal = Arc::new(Notify::new());
        let subscribes = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(0));
        let (sc, cl, sig, subs, gt) = (
            script.clone(),
            closed.clone(),
            closed_signal.clone(),
            subscribes.clone(),
            gate.clone(),
        );
        let feeds = tokio::spawn(async move {
            loop {
                let Ok((mut s, _)) = feed_listener.accept().await else {
                    return;
                };
                let frames = sc.lock().unwrap().clone();
                let (cl, sig, subs, gt) = (cl.clone(), sig.clone(), subs.clone(), gt.clone());
                tokio::spawn(async move {
                    // The subscribe: one line.
                    let mut line = Vec::new();
                    let mut byte = [0u8; 1];
                    while line.last() != Some(&b'\n') {
                        match s.read(&mut byte).await {
                            Ok(1) => line.push(byte[0]),
                            _ => return,
                        }
                    }
                    subs.fetch_add(1, Relaxed);
                    for step in &frames {
                        let written = match step {
                            Step::Write(f) => s.write_all(f).await.is_ok(),
                            Step::Hold => gt.acquire().await.map(|p| p.forget()).is_ok(),
                        };
                        if !written {
                            break;
                        }
                    }
                    let mut sink = [0u8; 1024];
                    while matches!(s.read(&mut sink).await, Ok(n) if n > 0) {}
                    cl.fetch_add(1, Relaxed);
                    sig.notify_waiters();
                });
            }
        });
        Self {
            master,
            feed,
            script,
            closed,
            closed_signal,
            subscribes,
            gate,
            tasks: vec![feeds],
        }
    }

    fn set_script(&self, frames: Vec<Step>) {
        *self.script.lock().unwrap() = frames;
    }

    /// Lets one subscriber's script past its [`Step::Hold`].
    fn go(&self) {
        self.gate.add_permits(1);
    }

    /// Waits until the bridge has closed `n` feed connections in all.
    async fn until_closed(&self, n: usize, within: Duration) -> bool {
        tokio::time::timeout(within, async {
            loop {
                let notified = self.closed_signal.notified();
                if self.closed.load(Relaxed) >= n {
                    return;
                }
                notified.await;
            }
        })
        .await
        .is_ok()
    }
}

impl Drop for HostileMaster {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// One bridge process following the hostile master, with its log counted.
struct Bridge {
    child: Child,
    pid: u32,
    http: SocketAddr,
    log_bytes: Arc<AtomicU64>,
    log_tail: Arc<Mutex<String>>,
    _dir: tempfile::TempDir,
}

impl Bridge {
    async fn start(m: &HostileMaster) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), "<!doctype html>lobby").unwrap();
        let mut launch = common::bridge_launch();
        launch.master = Some(m.master.addr);
        launch.master_feed = common::MasterFeed::At(m.feed);
        launch.poll_interval = Some(Duration::from_millis(200));
        launch.api_rate = Some(1_000_000);
        launch.static_dir = Some(dir.path().to_owned());
        launch.data_dir = Some(dir.path().join("data"));
        // Both streams piped: every byte it prints is counted.
        let mut child = common::piped(&launch).spawn().unwrap();
        let pid = child.id().unwrap();
        let log_bytes = Arc::new(AtomicU64::new(0));
        let log_tail = Arc::new(Mutex::new(String::new()));
        let (http, stdout) = common::readiness(&mut child).await;
        let stderr = child.stderr.take().unwrap();
        for mut pipe in [
            Box::new(stdout) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
            Box::new(stderr),
        ] {
            let (bytes, tail) = (log_bytes.clone(), log_tail.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                    bytes.fetch_add(n as u64, Relaxed);
                    let mut t = tail.lock().unwrap();
                    t.push_str(&String::from_utf8_lossy(&buf[..n.min(2048)]));
                    let len = t.len();
                    if len > 8192 {
                        let mut cut = len - 4096;
                        while !t.is_char_boundary(cut) {
                            cut += 1;
                        }
                        t.drain(..cut);
                    }
                }
            });
        }
        Self {
            child,
            pid,
            http,
            log_bytes,
            log_tail,
            _dir: dir,
        }
    }

    /// CPU time (user + system) the process has used.
    fn cpu(&self) -> Duration {
        common::cpu_of(self.pid)
    }

    /// Peak resident memory (VmHWM).
    fn peak_rss(&self) -> u64 {
        common::peak_rss_kib(self.pid) * 1024
    }

    /// `/api/servers`'s body (empty unless 200). A bridge busy with a big
    /// list may take a while in a debug build: waited for up to a minute.
    async fn servers(&self) -> (usize, String) {
        let mut s = TcpStream::connect(self.http).await.unwrap();
        let req = format!(
            "GET /api/servers HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.http
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut buf = Vec::new();
        tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut buf))
            .await
            .expect("/api/servers answered within a minute")
            .unwrap();
        let Some(split) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            return (0, String::new());
        };
        if !buf.starts_with(b"HTTP/1.1 200") {
            return (0, String::new());
        }
        let body = &buf[split + 4..];
        (body.len(), String::from_utf8_lossy(body).into_owned())
    }

    fn report(&self, phase: &str, api_max: usize) {
        eprintln!(
            "[hostile feed] {phase}: bridge log {} bytes, peak RSS {:.1} MB, CPU {:.2} s, largest /api/servers {} bytes",
            self.log_bytes.load(Relaxed),
            self.peak_rss() as f64 / 1e6,
            self.cpu().as_secs_f64(),
            api_max
        );
        eprintln!(
            "[hostile feed] {phase}: the log's tail:\n{}",
            self.log_tail.lock().unwrap()
        );
    }

    fn assert_bounds(&self, phase: &str, api_max: usize) {
        self.report(phase, api_max);
        let log = self.log_bytes.load(Relaxed);
        assert!(
            log <= 1_000_000,
            "{phase}: the bridge logged {log} bytes; its tail:\n{}",
            self.log_tail.lock().unwrap()
        );
        // The bound tells a bridge that keeps the list's bound from one
        // that does not, whatever the machine's speed: debug builds on
        // jemalloc measured 156–182 MB in the worst phase (a list just
        // within the bound taken, published, served whole and dropped;
        // see docs/feed.md) on a loaded 2-core machine, 202 MB beside the
        // browsers of the end-to-end tests and 257 MB beside them, two
        // busy loops and two compilers (the more the machine lags, the
        // more lists are in flight at once); a bridge without the list's
        // bound grew to 783 MB. Half of that is the line.
        let rss = self.peak_rss();
        assert!(rss <= 384_000_000, "{phase}: peak RSS {rss}");
        assert!(api_max <= 16 << 20, "{phase}: /api/servers {api_max} bytes");
    }

    async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

fn entry_json(id: u64, name: &str) -> String {
    format!(
        r#"{{"id":{id},"name":"{name}","players":{{"current":0,"max":4}},"isLobbyOpen":true,"gameplayMode":1}}"#
    )
}

fn snapshot(epoch: &str, seq: u64, entries: impl Iterator<Item = String>) -> Step {
    let servers: Vec<String> = entries.collect();
    Step::Write(frame(
        format!(
            r#"{{"command":"bridgeSnapshot","content":{{"epoch":"{epoch}","seq":{seq},"servers":[{}]}}}}"#,
            servers.join(",")
        )
        .as_bytes(),
    ))
}

fn delta(epoch: &str, seq: u64, upsert: impl Iterator<Item = String>) -> Step {
    let upsert: Vec<String> = upsert.collect();
    Step::Write(frame(
        format!(
            r#"{{"command":"bridgeDelta","content":{{"epoch":"{epoch}","seq":{seq},"prev":{},"upsert":[{}],"remove":[]}}}}"#,
            seq - 1,
            upsert.join(",")
        )
        .as_bytes(),
    ))
}

/// Reads `/api/servers` until `done` holds for its body (`what`), and
/// checks each body against `never`; returns the largest body seen.
async fn watch_api(
    bridge: &Bridge,
    what: &str,
    done: impl Fn(&str) -> bool,
    never: impl Fn(&str) -> bool,
) -> usize {
    let largest = std::cell::Cell::new(0);
    lobby_testkit::until(what, || async {
        let (len, body) = bridge.servers().await;
        largest.set(largest.get().max(len));
        assert!(!never(&body), "/api/servers showed what it must not");
        if done(&body) {
            Ok(())
        } else {
            Err(format!("/api/servers of {len} bytes"))
        }
    })
    .await;
    largest.get()
}

/// What [`watch_api`] waits for after the feed was given up: two more
/// polls answered by `m` than `from`, so the list the bridge publishes
/// by then is a polled one (the first of them taken, the second asked
/// an interval later).
fn two_polls_past(m: &HostileMaster, from: usize) -> impl Fn(&str) -> bool + '_ {
    move |_| m.master.answered() >= from + 2
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_feed_costs_the_bridge_little_and_reaches_nobody() {
    // 1. Names of a million characters: the snapshot is refused whole, the
    // bridge polls (an empty list); a valid snapshot afterwards is taken.
    let huge = "n".repeat(1_000_000);
    let m = HostileMaster::start(vec![snapshot(
        "e1",
        1,
        [entry_json(1, "Fine"), entry_json(2, &huge)].into_iter(),
    )])
    .await;
    let bridge = Bridge::start(&m).await;
    assert!(m.until_closed(1, HUNG).await, "the bridge kept the feed");
    let long = |body: &str| body.contains(&"n".repeat(101));
    let polled = m.master.answered();
    let mut api_max = watch_api(
        &bridge,
        "the bridge polling after the refused snapshot",
        two_polls_past(&m, polled),
        long,
    )
    .await;
    m.set_script(vec![snapshot("e2", 1, [entry_json(1, "Fine")].into_iter())]);
    let largest = watch_api(
        &bridge,
        "a valid snapshot after the refused one followed",
        |body| body.contains("\"Fine\""),
        long,
    )
    .await;
    api_max = api_max.max(largest);
    bridge.assert_bounds("names of 1,000,000 characters", api_max);
    bridge.stop().await;
    drop(m);

    // 2. Past the bound: a snapshot of ~11 MiB, published before anything
    // else comes (the worst case: the list held whole and served), then
    // deltas of ~3 MiB each (served whole, the list would pass 16 MiB at
    // the second).
    let name = |i: u64| format!("server {i:07} {}", "x".repeat(60));
    let first: u64 = 70_000;
    let mut script = vec![
        snapshot("big", 1, (1..=first).map(|i| entry_json(i, &name(i)))),
        Step::Hold,
    ];
    let per_delta = 20_000;
    for d in 0..4u64 {
        let from = first + 1 + d * per_delta;
        script.push(delta(
            "big",
            2 + d,
            (from..from + per_delta).map(|i| entry_json(i, &name(i))),
        ));
    }
    eprintln!(
        "[hostile feed] past the bound: {} bytes sent per subscriber",
        script.iter().map(Step::len).sum::<usize>()
    );
    let m = HostileMaster::start(script).await;
    let bridge = Bridge::start(&m).await;
    let last = format!("\"{}\"", name(first));
    let largest = watch_api(
        &bridge,
        "the list within the bound published",
        |body| body.contains(&last),
        |_| false,
    )
    .await;
    m.go();
    let closed = m.until_closed(1, Duration::from_secs(60)).await;
    // Once it gave the feed up, the bridge polls; what it serves then.
    let after = if closed {
        let polled = m.master.answered();
        watch_api(
            &bridge,
            "the bridge polling after the list outgrew the bound",
            two_polls_past(&m, polled),
            |_| false,
        )
        .await
    } else {
        0
    };
    let api_max = largest.max(after);
    bridge.assert_bounds("a list past 16 MiB", api_max);
    assert!(
        closed,
        "the bridge kept a feed whose list outgrew the bound"
    );
    bridge.stop().await;
    drop(m);

    // 3. 170,000 entries in descending id order (one frame under 16 MiB).
    let n = 170_000u64;
    let reversed = snapshot(
        "rev",
        1,
        (1..=n).rev().map(|i| entry_json(i, &format!("s{i}"))),
    );
    eprintln!(
        "[hostile feed] reversed: a snapshot frame of {} bytes",
        reversed.len()
    );
    let m = HostileMaster::start(vec![reversed]).await;
    let bridge = Bridge::start(&m).await;
    // The bridge closes the feed once it dealt with the snapshot (refused:
    // its list would outgrow the bound); the CPU is the process's since it
    // started, a little more than the snapshot's.
    let taken = m.until_closed(1, Duration::from_secs(120)).await;
    let cpu = bridge.cpu();
    eprintln!(
        "[hostile feed] 170,000 reversed entries: {:.2} s CPU (target ≤ 2 s in release)",
        cpu.as_secs_f64()
    );
    bridge.assert_bounds("170,000 reversed entries", 0);
    assert!(taken, "the reversed snapshot was never dealt with");
    // Generous for a debug build; the quadratic insert took minutes.
    assert!(cpu <= Duration::from_secs(15), "{cpu:?}");
    bridge.stop().await;
    drop(m);

    // 4. An epoch that never matches, a megabyte long, in a loop.
    let long_epoch = "E".repeat(1_000_000);
    let mut script = vec![snapshot("short", 1, [entry_json(1, "Fine")].into_iter())];
    for i in 0..8 {
        script.push(delta(&long_epoch, 2 + i, std::iter::empty()));
    }
    let m = HostileMaster::start(script).await;
    let bridge = Bridge::start(&m).await;
    assert!(m.until_closed(1, HUNG).await, "the bridge kept the feed");
    // Each feed that misbehaved is tried again after the backoff, which
    // doubles from the 100 ms minimum: five more subscribes take at least
    // 100 + 200 + 400 + 800 + 1,600 ms (a loaded machine only more); a
    // bridge reconnecting at once would make them in milliseconds.
    let from = m.subscribes.load(Relaxed);
    let start = std::time::Instant::now();
    lobby_testkit::wait::until_true("five more subscribes", || {
        m.subscribes.load(Relaxed) >= from + 5
    })
    .await;
    let took = start.elapsed();
    eprintln!("[hostile feed] epoch mismatch: 5 subscribes more in {took:?}");
    bridge.assert_bounds("an epoch that never matches", 0);
    assert!(
        took >= Duration::from_millis(3_000),
        "reconnects without its backoff: 5 subscribes in {took:?}"
    );
    bridge.stop().await;
}
