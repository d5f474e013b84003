//! The `master` executable: the ban file (bad lines, an unreadable file,
//! reload on SIGHUP), flag validation, and a quiet log under floods.

use crate::common;

use std::{
    io::{BufRead, BufReader},
    net::SocketAddr,
    path::Path,
    process::{Child, Stdio},
    sync::mpsc,
    time::Instant,
};

use common::*;
use lobby_testkit::launch::MasterLaunch;
use protocol::frame::frame;
use serde_json::json;
use tokio::io::AsyncWriteExt;

/// A running `master` whose stderr lines arrive on a channel; killed on drop.
struct Proc {
    child: Child,
    addr: SocketAddr,
    stderr: mpsc::Receiver<String>,
}

impl Proc {
    fn start(args: &[&str]) -> Proc {
        let (mut child, stderr) = spawn(args);
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the readiness line");
        let addr = line
            .trim()
            .strip_prefix("master listening on ")
            .unwrap_or_else(|| panic!("not the readiness line: {line:?}"))
            .parse()
            .expect("an address");
        Proc {
            child,
            addr,
            stderr,
        }
    }

    /// Waits for a stderr line containing `needle`; returns it.
    fn wait_for(&self, needle: &str) -> String {
        let deadline = Instant::now() + HUNG;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(_) => panic!("no log line containing {needle:?} within {HUNG:?}"),
            }
        }
    }

    /// Sends `sig` (`"HUP"`, `"TERM"`) with kill(1): the product crates
    /// forbid unsafe code, tests included.
    fn signal(&self, sig: &str) {
        let status = std::process::Command::new("kill")
            .args(["-s", sig, &self.child.id().to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill -s {sig} failed");
    }

    /// Stops the master and returns every stderr line it wrote.
    fn stop(mut self) -> Vec<String> {
        self.signal("TERM");
        let _ = self.child.wait();
        let mut lines = Vec::new();
        while let Ok(line) = self.stderr.recv_timeout(HUNG) {
            lines.push(line);
        }
        lines
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the master with `args` after `--listen 127.0.0.1:0`, forwarding
/// its stderr lines (ANSI colours off) to a channel until it exits.
fn spawn(args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let launch = MasterLaunch {
        // Loopback is where the floods come from: no exemption.
        exempt_loopback: false,
        env: vec![("NO_COLOR".into(), "1".into())],
        args: args.iter().map(Into::into).collect(),
        ..MasterLaunch::new(env!("CARGO_BIN_EXE_master").into())
    };
    let mut child = launch
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the master binary");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Runs the master with `args`, expecting it to exit with an error by
/// itself; returns its stderr.
fn run_failing(args: &[&str]) -> String {
    let (mut child, stderr) = spawn(args);
    let status = until_blocking("the master's exit", || {
        child
            .try_wait()
            .expect("wait for the master")
            .ok_or("running")
    });
    assert!(!status.success(), "the master exited successfully");
    let mut text = String::new();
    while let Ok(line) = stderr.recv_timeout(HUNG) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write the ban file");
}

#[tokio::test]
async fn sighup_reloads_the_ban_file_and_closes_only_the_newly_banned() {
    let dir = tempfile::tempdir().unwrap();
    let bans = dir.path().join("bans");
    write(&bans, "# test bans\n127.0.0.3 an old ban\nnot-an-address\n");
    let m = Proc::start(&["--ban-file", bans.to_str().unwrap()]);
    let bad = m.wait_for("bad ban-file line 3");
    assert!(bad.contains("not-an-address"), "{bad}");
    m.wait_for("ban list loaded");

    refused("127.0.0.3", m.addr, "a banned address").await;
    let mut soon_banned = Client::connect_from("127.0.0.2", m.addr).await;
    soon_banned.register("cheater", 20000).await;
    assert_eq!(names(&soon_banned.query().await), ["cheater"]);
    let mut kept = Client::connect_from("127.0.0.4", m.addr).await;
    kept.register("honest", 20001).await;
    assert_eq!(kept.query().await.len(), 2);

    write(&bans, "127.0.0.2/32 fake servers # since today\n");
    m.signal("HUP");
    let reloaded = m.wait_for("ban list reloaded");
    assert!(reloaded.contains("closed=1"), "{reloaded}");
    soon_banned
        .closed("a connection from a newly banned address")
        .await;
    assert_eq!(names(&kept.query().await), ["honest"], "others stay");
    let mut unbanned = Client::connect_from("127.0.0.3", m.addr).await;
    assert!(unbanned.query().await.len() == 1, "the old ban is lifted");

    // A file that disappears keeps the list in force.
    std::fs::remove_file(&bans).unwrap();
    m.signal("HUP");
    m.wait_for("ban list not reloaded");
    refused("127.0.0.2", m.addr, "still banned").await;
}

#[test]
fn an_unreadable_ban_file_stops_the_start() {
    let err = run_failing(&["--ban-file", "/nonexistent/lobby-bans"]);
    assert!(
        err.contains("cannot read the ban file /nonexistent/lobby-bans"),
        "{err}"
    );
}

#[test]
fn zero_limits_are_refused_at_start() {
    let err = run_failing(&["--max-per-address", "0"]);
    assert!(err.contains("--max-per-address"), "{err}");
    let err = run_failing(&["--first-message-timeout", "0s"]);
    assert!(err.contains("--first-message-timeout"), "{err}");
    let err = run_failing(&["--exempt", "10.0.0.0/33"]);
    assert!(err.contains("neither an IP address nor a CIDR"), "{err}");
}

#[tokio::test]
async fn a_message_flood_does_not_flood_the_log() {
    // Rate limits out of the way: every message is processed.
    let m = Proc::start(&["--message-rate", "1000000", "--message-burst", "1000000"]);
    let mut c = Client::connect_from("127.0.0.2", m.addr).await;
    let mut flood = Vec::new();
    for i in 0..500u32 {
        for msg in [
            json!({"command": "msRegisterGameServer", "content": {
                "serverName": format!("fake {i}"), "serverAddress": "192.168.0.10",
                "serverPort": 20000}}),
            json!({"command": "msUpdateGameServerStats", "content": {
                "players": {"current": 1, "max": 4}, "isLobbyOpen": true, "gameplayMode": 1}}),
            json!({"command": "msUnregisterGameServer"}),
            json!({"command": "msFly"}),
        ] {
            flood.extend(frame(msg.to_string().as_bytes()));
        }
    }
    c.stream.write_all(&flood).await.unwrap();
    // Answered after everything before it was processed (and logged).
    assert!(c.query().await.is_empty());
    let lines = m.stop();
    assert!(
        lines.len() < 20,
        "{} log lines for one flooding connection:\n{}",
        lines.len(),
        lines.join("\n")
    );
}

#[tokio::test]
async fn floods_by_reconnecting_do_not_flood_the_log() {
    let m = Proc::start(&[
        "--first-message-timeout",
        "200ms",
        "--message-burst",
        "5",
        "--flood-close-after",
        "10",
    ]);
    let long_name = "n".repeat(100);
    // Register and leave, again and again: two INFO events each time.
    for i in 0..200u16 {
        let mut c = Client::connect_from("127.0.0.2", m.addr).await;
        c.register(&long_name, 20000 + i).await;
        // Answered after the registration was processed (and logged).
        c.query().await;
    }
    // Flood and get closed: over the rate, then a flood.
    let msg = frame(
        json!({"command": "msQueryGameServers"})
            .to_string()
            .as_bytes(),
    );
    for _ in 0..100 {
        let mut c = Client::connect_from("127.0.0.3", m.addr).await;
        c.send_raw(&msg.repeat(100)).await;
        c.closed("a flooding connection").await;
    }
    // Say nothing and be closed at the first-message timeout.
    for _ in 0..4 {
        let mut silent = Vec::new();
        for _ in 0..25 {
            silent.push(Client::connect_from("127.0.0.4", m.addr).await);
        }
        for c in &mut silent {
            c.closed("a silent connection").await;
        }
    }
    let lines = m.stop();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    eprintln!(
        "{} log lines, {bytes} bytes:\n{}",
        lines.len(),
        lines.join("\n")
    );
    // 200 registrations, 200 removals, 100 floods, 100 timeouts: a few
    // lines of each, with the count of the others.
    assert!(
        lines.len() < 40 && bytes < 8 * 1024,
        "{} log lines ({bytes} bytes) for 600 connections:\n{}",
        lines.len(),
        lines.join("\n")
    );
    // Each kind still shows up, marked as throttled.
    for kind in ["registered", "message flood", "first-message timeout"] {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(kind) && l.contains("held_back=")),
            "no {kind:?} line"
        );
    }
}
