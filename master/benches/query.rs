//! `cargo bench -p master`: round trip of `msQueryGameServers` with 10,000
//! registered servers (each on its own TCP connection), against the same
//! query on an empty master measured in the same run, plus the cost of
//! rebuilding the cached reply after a change.
//!
//! Set `QUERY_BENCH_SERVERS` / `QUERY_BENCH_ROUNDS` for a quick smoke run.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use master::{Config, Master};
use protocol::{frame::frame, Command, Registration};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
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

#[tokio::main]
async fn main() {
    let servers = env_or("QUERY_BENCH_SERVERS", 10_000);
    let rounds = env_or("QUERY_BENCH_ROUNDS", 500);
    let _ = rlimit::increase_nofile_limit(servers as u64 * 2 + 1024);

    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let master = Master::new(Config::default());
    let registry = master.registry();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        master
            .run(listener, async {
                let _ = stop_rx.await;
            })
            .await
    });

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
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while registry.len() < servers && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(registry.len(), servers, "all servers registered");
    let reply_len = registry.query_reply().len();
    let full = query_round_trips(addr, rounds).await;

    // Cost of rebuilding the reply after a change (cache miss), in-process.
    let mut rebuild = Histogram::<u64>::new(3).expect("histogram");
    let probe = registry.next_conn_id();
    for i in 0..50 {
        let reg = Registration::new(&format!("probe {i}"), "a.org", 1).expect("valid");
        registry.register(probe, reg);
        let start = Instant::now();
        let _ = registry.query_reply();
        rebuild
            .record(start.elapsed().as_micros() as u64)
            .expect("record");
    }

    println!("master query benchmark: {servers} servers, {rounds} sequential queries, reply {reply_len} bytes");
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
    let _ = stop_tx.send(());
    let _ = server.await;
}
