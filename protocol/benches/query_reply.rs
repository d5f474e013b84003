//! `cargo bench -p protocol --bench query_reply`: reading an
//! `msRQueryGameServers` reply of 10,000 servers (what a bridge with
//! `--master` does with every changed list) by `Command::parse`, the
//! baseline, and by `ServerList::from_reply`, in the same run, alternating.
//!
//! Set `REPLY_BENCH_SERVERS` / `REPLY_BENCH_ROUNDS` for a quick smoke run.

use std::{hint::black_box, time::Instant};

use protocol::{
    message::{query_reply_json, ServerList},
    Command, Players, ServerEntry, Stats,
};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut micros: Vec<u128>) -> u128 {
    micros.sort_unstable();
    micros[micros.len() / 2]
}

fn main() {
    let servers = env_or("REPLY_BENCH_SERVERS", 10_000);
    let rounds = env_or("REPLY_BENCH_ROUNDS", 30);
    let entries: Vec<ServerEntry> = (0..servers)
        .map(|i| ServerEntry {
            registrant: None,
            name: format!("Server {i} von Bösewicht"),
            address: Some(format!("10.{}.{}.{}", i >> 16 & 255, i >> 8 & 255, i & 255)),
            port: Some(20_000 + (i % 1000) as u16),
            stats: Stats {
                players: Players {
                    current: (i % 5) as u32,
                    max: 4,
                },
                ..Stats::default()
            },
        })
        .collect();
    let reply = query_reply_json(&entries);
    let (mut parse, mut typed) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let start = Instant::now();
        let Ok(Command::QueryReply(list)) = Command::parse(black_box(&reply)) else {
            panic!("the reply did not parse");
        };
        parse.push(start.elapsed().as_micros());
        assert_eq!(list.servers.len(), servers);

        let start = Instant::now();
        let Some(list) = ServerList::from_reply(black_box(&reply)) else {
            panic!("the reply was not read");
        };
        typed.push(start.elapsed().as_micros());
        assert_eq!(list.servers.len(), servers);
    }
    let (parse, typed) = (median(parse), median(typed));
    println!(
        "msRQueryGameServers, {servers} servers, {} KiB, median of {rounds}:",
        reply.len() / 1024
    );
    println!("  Command::parse (baseline)  {:>8} µs", parse);
    println!("  ServerList::from_reply     {:>8} µs", typed);
    println!(
        "  ratio                      {:>8.2}x",
        parse as f64 / typed.max(1) as f64
    );
}
