//! `cargo bench -p master`: round trip of `msQueryGameServers` with 10,000
//! registered servers (each on its own TCP connection), against the same
//! query on an empty master measured in the same run, plus the cost of
//! rebuilding the cached reply after a change.
//!
//! Set `QUERY_BENCH_SERVERS` / `QUERY_BENCH_ROUNDS` for a quick smoke run.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use master::Registry;
use protocol::{frame::frame, Command, Registration};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Sends `rounds` queries one after another and records each round trip.
async fn query_round_trips(addr: std::net::SocketAddr, rounds: usize) -> Histogram<u64> {
    let mut conn = TcpStream::connect(addr).await.expect("connect");
    conn.set_nodelay(true).expect("nodelay");
    let query = frame(Command::Query.to_json().as_bytes());
    let mut hist = Histogram::<u64>::new(3).expect("histogram");
    let mut buf = vec![0u8; 1 << 16];
    for _ in 0..rounds {
        let start = Instant::now();
        conn.write_all(&query).await.expect("write");
        // Read the length digits, then exactly that many bytes.
        let mut have = 0;
        let (digits, len) = loop {
            let n = conn.read(&mut buf[have..]).await.expect("read");
            assert!(n > 0, "master closed the connection");
            have += n;
            let digits = buf[..have]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits < have {
                let len: usize = std::str::from_utf8(&buf[..digits])
                    .unwrap()
                    .parse()
                    .unwrap();
                break (digits, len);
            }
        };
        let mut remaining = (digits + len).saturating_sub(have);
        while remaining > 0 {
            let chunk = remaining.min(buf.len());
            conn.read_exact(&mut buf[..chunk]).await.expect("read body");
            remaining -= chunk;
        }
        hist.record(start.elapsed().as_micros() as u64)
            .expect("record");
    }
    hist
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Starts the real `master` binary on a free loopback port: one process per
/// side keeps each under the file-descriptor limit with 10,000 connections.
async fn spawn_master(servers: usize) -> (tokio::process::Child, std::net::SocketAddr) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_master"))
        // Long keepalive: 10,000 idle loopback connections probed in one burst
        // overflow the kernel's loopback queue, which is not what this measures.
        .args(["--listen", "127.0.0.1:0", "--keepalive-secs", "600"])
        // Room for the measuring connections beside the registered servers.
        .args(["--max-connections", &(servers + 16).to_string()])
        // Every server and the measuring client come from 127.0.0.1, and the
        // client queries back to back: no per-address cap, no rate limit.
        .args(["--exempt", "127.0.0.1"])
        .env(
            "RUST_LOG",
            std::env::var("MASTER_LOG").unwrap_or("warn".into()),
        )
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start master");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    tokio::io::BufReader::new(stdout)
        .read_line(&mut line)
        .await
        .expect("readiness line");
    let addr = line
        .trim()
        .rsplit(' ')
        .next()
        .and_then(|a| a.parse().ok())
        .expect("address in the readiness line");
    (child, addr)
}

async fn count_servers(addr: std::net::SocketAddr) -> usize {
    let mut conn = TcpStream::connect(addr).await.expect("connect");
    conn.write_all(&frame(Command::Query.to_json().as_bytes()))
        .await
        .expect("write");
    let mut reply = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = conn.read(&mut buf).await.expect("read");
        assert!(n > 0, "master closed the connection");
        reply.extend_from_slice(&buf[..n]);
        if reply.last() == Some(&b'\n') {
            let digits = reply.iter().take_while(|b| b.is_ascii_digit()).count();
            let len: usize = std::str::from_utf8(&reply[..digits])
                .unwrap()
                .parse()
                .unwrap();
            if reply.len() == digits + len {
                let Ok(Command::QueryReply(list)) = Command::parse(&reply[digits..]) else {
                    panic!("not a list reply")
                };
                return list.servers.len();
            }
        }
    }
}

#[tokio::main]
async fn main() {
    let servers = env_or("QUERY_BENCH_SERVERS", 10_000);
    let rounds = env_or("QUERY_BENCH_ROUNDS", 500);
    let _ = rlimit::increase_nofile_limit(servers as u64 + 1024);
    let (_master, addr) = spawn_master(servers).await;

    let empty = query_round_trips(addr, rounds).await;

    let mut conns = Vec::with_capacity(servers);
    for i in 0..servers {
        let mut c = TcpStream::connect(addr).await.expect("connect");
        let reg = Registration::new(&format!("Server {i} von Bösewicht"), "192.168.0.10", 20000)
            .expect("valid");
        c.write_all(&frame(Command::Register(reg).to_json().as_bytes()))
            .await
            .expect("register");
        conns.push(c);
        // Let the master keep up, as real servers arriving over time would.
        if (i + 1) % 1000 == 0 {
            let deadline = Instant::now() + Duration::from_secs(30);
            while count_servers(addr).await < i + 1 && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut listed = 0;
    while Instant::now() < deadline {
        listed = count_servers(addr).await;
        if listed == servers {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(listed, servers, "all servers registered ({listed} listed)");
    let full = query_round_trips(addr, rounds).await;

    // Cost of rebuilding the reply after a change (cache miss), in-process.
    let registry = Registry::new();
    for i in 0..servers {
        let reg = Registration::new(&format!("Server {i} von Bösewicht"), "192.168.0.10", 20000)
            .expect("valid");
        registry.register(i as u64, reg);
    }
    let reply_len = registry.query_reply().len();
    let mut rebuild = Histogram::<u64>::new(3).expect("histogram");
    for i in 0..50 {
        let reg = Registration::new(&format!("probe {i}"), "a.org", 1).expect("valid");
        registry.register(u64::MAX, reg);
        let start = Instant::now();
        let _ = registry.query_reply();
        rebuild
            .record(start.elapsed().as_micros() as u64)
            .expect("record");
    }

    println!(
        "master query benchmark: {servers} servers on their own connections, {rounds} sequential queries, reply {reply_len} bytes"
    );
    println!("| figure | p50 ms | p99 ms | baseline p50 ms | ratio |");
    println!("|---|---|---|---|---|");
    println!(
        "| query round trip, {servers} servers (cached reply) | {:.3} | {:.3} | {:.3} (empty list) | {:.1}x |",
        ms(full.value_at_quantile(0.5)),
        ms(full.value_at_quantile(0.99)),
        ms(empty.value_at_quantile(0.5)),
        full.value_at_quantile(0.5) as f64 / empty.value_at_quantile(0.5).max(1) as f64
    );
    println!(
        "| reply rebuild after a change, in-process | {:.3} | {:.3} | - | - |",
        ms(rebuild.value_at_quantile(0.5)),
        ms(rebuild.value_at_quantile(0.99)),
    );
    drop(conns);
}
