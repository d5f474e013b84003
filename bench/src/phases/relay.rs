//! Relay figures: the round trip of `msQueryGameServers` through an admin
//! WebSocket (relayed on its own master connection) against the same query
//! sent directly over TCP, pinned to one CPU; then throughput of many
//! connections with several requests in flight, relayed against direct.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, Ordering::Relaxed},
        Arc,
    },
    time::{Duration, Instant},
};

use hdrhistogram::Histogram;
use tokio::sync::Barrier;

use crate::{
    direct,
    error::{within_for, Error, Result},
    phases::Env,
    procs::{self, BridgeLaunch, Proc},
    report::{count, histogram, q, record, times, Row, Verdict},
    ws,
};

/// Runs both relay figures.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let (master, maddr) = procs::start_master(&env.bins, 12_000).await?;
    let _servers = direct::register_servers(maddr, s.relay_servers, "Relay", 0).await?;
    let opts = BridgeLaunch {
        rate_limit: procs::UNLIMITED,
        ..procs::bridge(&env.bins)
    };
    let (bridge, baddr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    let mut rows = round_trip(env, &master, maddr, &bridge, baddr).await?;
    rows.push(throughput(env, maddr, baddr).await?);
    bridge.stop().await;
    master.stop().await;
    Ok(rows)
}

async fn round_trip(
    env: &Env,
    master: &Proc,
    maddr: SocketAddr,
    bridge: &Proc,
    baddr: SocketAddr,
) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let me = std::process::id();
    // Pin all three to one CPU: unpinned, the figure mostly measures how
    // fast an idle vCPU wakes up.
    let restore = match &env.pin_cpu {
        Some(cpu) => {
            let before: Vec<(u32, String)> = [me, master.pid(), bridge.pid()]
                .into_iter()
                .map(|pid| procs::affinity(pid).map(|a| (pid, a)))
                .collect::<Result<_>>()?;
            for (pid, _) in &before {
                procs::pin(*pid, cpu)?;
            }
            before
        }
        None => Vec::new(),
    };
    let measured = async {
        let mut tcp = direct::connect(maddr).await?;
        let mut admin = ws::admin_with_link(&ws::url(baddr)).await?;
        let reply_bytes = direct::query(&mut tcp).await?.len();
        for _ in 0..s.warmup_rounds {
            direct::query(&mut tcp).await?;
            ws::query(&mut admin).await?;
        }
        // Alternate blocks, so drift in the machine's speed hits both alike.
        let (mut d, mut r) = (histogram(), histogram());
        let blocks = 10;
        for _ in 0..blocks {
            for _ in 0..s.relay_rounds / blocks {
                let t = Instant::now();
                direct::query(&mut tcp).await?;
                record(&mut d, t.elapsed());
            }
            for _ in 0..s.relay_rounds / blocks {
                let t = Instant::now();
                ws::query(&mut admin).await?;
                record(&mut r, t.elapsed());
            }
        }
        Ok::<_, Error>((d, r, reply_bytes))
    };
    // A full run makes 5,000 sequential round trips each way.
    let result = within_for(Duration::from_secs(300), "relay round trips", measured).await;
    for (pid, cpus) in &restore {
        procs::pin(*pid, cpus)?;
    }
    let (d, r, reply_bytes): (Histogram<u64>, Histogram<u64>, usize) = result?;
    let pinned = match &env.pin_cpu {
        Some(cpu) => format!("pinned to CPU {cpu}"),
        None => "NOT pinned".to_owned(),
    };
    let p50 = |h: &Histogram<u64>| h.value_at_quantile(0.5) as f64;
    let ratio50 = p50(&r) / p50(&d).max(1.0);
    let what = format!(
        "{} sequential queries, {} servers listed ({:.1} KB reply), {pinned}",
        count(s.relay_rounds as u64),
        s.relay_servers,
        reply_bytes as f64 / 1000.0
    );
    Ok(vec![
        Row::new(
            format!("relay round trip p50 ({what})"),
            q(&r, 0.5),
            format!("direct TCP {}", q(&d, 0.5)),
            times(p50(&r), p50(&d)),
            "≤ 2× direct",
            Verdict::of(ratio50 <= 2.0),
        ),
        Row::new(
            "relay round trip p99 (same run)",
            q(&r, 0.99),
            format!("direct TCP {}", q(&d, 0.99)),
            times(
                r.value_at_quantile(0.99) as f64,
                d.value_at_quantile(0.99) as f64,
            ),
            "-",
            Verdict::Info,
        ),
    ])
}

/// Replies per second with `conns` × `in_flight` requests outstanding,
/// direct and relayed in alternating slices on the same connections, so a
/// change in the machine's background load hits both alike.
async fn throughput(env: &Env, maddr: SocketAddr, baddr: SocketAddr) -> Result<Row> {
    let s = &env.sizes;
    let mut tcp = Vec::with_capacity(s.throughput_conns);
    let mut admins = Vec::with_capacity(s.throughput_conns);
    let url = ws::url(baddr);
    for _ in 0..s.throughput_conns {
        let mut c = direct::connect(maddr).await?;
        direct::query(&mut c).await?;
        tcp.push(Client::Tcp(c));
        admins.push(Client::Ws(Box::new(ws::admin_with_link(&url).await?)));
    }
    let slices = 4u32;
    let slice = s.throughput_time / slices;
    let (mut direct_replies, mut relay_replies) = (0, 0);
    for _ in 0..slices {
        let (back, n) = load(tcp, s.in_flight, slice).await?;
        (tcp, direct_replies) = (back, direct_replies + n);
        let (back, n) = load(admins, s.in_flight, slice).await?;
        (admins, relay_replies) = (back, relay_replies + n);
    }
    let secs = (slice * slices).as_secs_f64();
    let (direct_rate, relay_rate) = (direct_replies as f64 / secs, relay_replies as f64 / secs);
    let share = relay_rate / direct_rate.max(1.0);
    Ok(Row::new(
        format!(
            "relay throughput ({} admin WebSockets × {} in flight, {:?} in {slices} slices alternating with direct, unpinned)",
            s.throughput_conns, s.in_flight, s.throughput_time
        ),
        format!("{} msgs/s", count(relay_rate as u64)),
        format!("direct TCP {} msgs/s", count(direct_rate as u64)),
        format!("{:.0} %", share * 100.0),
        "≥ 50 % of direct",
        Verdict::of(share >= 0.5),
    ))
}

enum Client {
    Tcp(direct::Conn),
    Ws(Box<ws::Ws>),
}

impl Client {
    async fn send_query(&mut self) -> Result<()> {
        match self {
            Self::Tcp(c) => direct::send(c, direct::QUERY).await,
            Self::Ws(w) => ws::send(w, direct::QUERY).await,
        }
    }

    async fn next_reply(&mut self) -> Result<()> {
        match self {
            Self::Tcp(c) => direct::next_message(c).await.map(drop),
            Self::Ws(w) => ws::next_text(w).await.map(drop),
        }
    }
}

/// Lets every client keep `in_flight` queries outstanding for `time`;
/// returns the clients (with nothing outstanding) and the replies counted.
async fn load(
    clients: Vec<Client>,
    in_flight: usize,
    time: Duration,
) -> Result<(Vec<Client>, u64)> {
    let replies = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(clients.len()));
    let mut tasks = Vec::with_capacity(clients.len());
    for mut client in clients {
        let (replies, start) = (replies.clone(), start.clone());
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let deadline = Instant::now() + time;
            for _ in 0..in_flight {
                client.send_query().await?;
            }
            let mut outstanding = in_flight;
            while outstanding > 0 {
                client.next_reply().await?;
                outstanding -= 1;
                if Instant::now() < deadline {
                    replies.fetch_add(1, Relaxed);
                    client.send_query().await?;
                    outstanding += 1;
                }
            }
            Ok::<_, Error>(client)
        }));
    }
    let mut back = Vec::with_capacity(tasks.len());
    for t in tasks {
        // The run's length (`time`) is part of the figure; the guard
        // against a hung client is beyond it.
        let client = within_for(time + lobby_testkit::HUNG, "throughput run", async {
            t.await
                .map_err(|e| Error::Unexpected(format!("client task: {e}")))?
        })
        .await?;
        back.push(client);
    }
    Ok((back, replies.load(Relaxed)))
}
