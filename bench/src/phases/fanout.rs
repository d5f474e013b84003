//! Fan-out: thousands of subscribed viewers, hundreds of registered
//! servers, one server changes its stats; how long until every viewer has
//! the new list, and how many queries the bridge sent the master meanwhile.

use std::time::{Duration, Instant};

use futures_util::{stream::SplitSink, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use lobby_testkit::metrics;

use crate::{
    direct::{self, REPLY_PREFIX},
    error::{Error, Result},
    phases::{
        crowd::{Crowd, Member, Rounds},
        Env,
    },
    procs,
    report::{count, ms, q, times, Row, Verdict},
    ws,
};

/// Opens `count` viewers at `url` that subscribe to whole lists
/// (`bridgeSubscribe`), each timing the rounds of the returned crowd.
pub(crate) async fn subscribers(url: &str, count: usize) -> Result<Crowd> {
    Crowd::open(count, "viewers", |member| {
        subscriber(url.to_owned(), member)
    })
    .await
}

async fn subscriber(url: String, member: Member) -> Result<()> {
    let permit = member.connecting().await;
    let mut socket = ws::connect(&url).await?;
    ws::send(&mut socket, r#"{"command":"bridgeSubscribe"}"#).await?;
    while !ws::next_text(&mut socket)
        .await?
        .as_str()
        .starts_with(REPLY_PREFIX)
    {}
    drop(permit);
    member.watch(&mut socket).await
}

pub(crate) type AdminSink = SplitSink<ws::Ws, Message>;

pub(crate) async fn admin_change(admin: &mut AdminSink, current: u64) -> Result<()> {
    ws::send(admin, &direct::stats_json(current)).await
}

/// Runs the fan-out figures.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let opts = procs::bridge(&env.bins);
    let poll = procs::POLL_INTERVAL;
    let (master, maddr) = procs::start_master(&env.bins, 12_000).await?;
    let mut servers = direct::register_servers(maddr, s.fanout_servers - 1, "Fanout", 0).await?;
    let (bridge, baddr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    let url = ws::url(baddr);

    // The changing server is an admin's test server: its change reaches
    // viewers at once (the bridge re-queries after each admin command).
    let mut admin = ws::admin(&url).await?;
    ws::send(&mut admin, &direct::register_json("Fanout probe", 29_999)).await?;
    let mut probe = direct::connect(maddr).await?;
    while direct::count_servers(&mut probe).await? < s.fanout_servers {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (mut admin, mut admin_rx) = admin.split();
    // Drain the admin's socket (and answer the bridge's pings).
    tokio::spawn(async move { while let Some(Ok(_)) = admin_rx.next().await {} });

    let mut base = Rounds::new();
    let mut one = subscribers(&url, 1).await?;
    for i in 0..s.fanout_rounds as u64 {
        let got = one
            .round(i + 1, 1000 + i, admin_change(&mut admin, 1000 + i))
            .await?;
        base.add(&got);
    }
    one.close().await;

    let rss_before = bridge.rss_kib()?;
    let mut viewers = subscribers(&url, s.fanout_viewers).await?;
    let (mut by_admin, mut by_poll) = (Rounds::new(), Rounds::new());
    let queries_before = metrics::scrape(baddr, "bridge_master_queries_total")
        .await
        .map_err(Error::Unexpected)?;
    let window_start = Instant::now();
    let slot = s.fanout_window / (2 * s.fanout_rounds as u32);
    for i in 0..s.fanout_rounds as u64 {
        let t = Instant::now();
        let got = viewers
            .round(100 + i, 2000 + i, admin_change(&mut admin, 2000 + i))
            .await?;
        by_admin.add(&got);
        tokio::time::sleep(slot.saturating_sub(t.elapsed())).await;
        let t = Instant::now();
        let game = &mut servers[0];
        let got = viewers
            .round(
                200 + i,
                3000 + i,
                direct::send(game, &direct::stats_json(3000 + i)),
            )
            .await?;
        by_poll.add(&got);
        tokio::time::sleep(slot.saturating_sub(t.elapsed())).await;
    }
    tokio::time::sleep(s.fanout_window.saturating_sub(window_start.elapsed())).await;
    let queries = metrics::scrape(baddr, "bridge_master_queries_total")
        .await
        .map_err(Error::Unexpected)?
        - queries_before;
    let window = window_start.elapsed();
    let rss_during = bridge.rss_kib()?;
    viewers.close().await;
    bridge.stop().await;
    master.stop().await;

    let polls = (window.as_secs_f64() / poll.as_secs_f64()).floor() as u64 + 1;
    let bound = polls + s.fanout_rounds as u64;
    let p99 = by_admin.each.value_at_quantile(0.99);
    let n = s.fanout_viewers;
    Ok(vec![
        Row::new(
            format!(
                "fan-out: admin's server changes, {} subscribed viewers, {} servers ({} rounds)",
                count(n as u64),
                s.fanout_servers,
                s.fanout_rounds
            ),
            by_admin.summary(n),
            format!("1 viewer: p99 {}", q(&base.each, 0.99)),
            times(p99 as f64, base.each.value_at_quantile(0.99) as f64),
            "p99 ≤ 500 ms",
            Verdict::of(p99 <= 500_000),
        ),
        Row::new(
            "fan-out: game server changes over TCP (bridge learns it at its next poll)",
            by_poll.summary(n),
            format!("poll interval {}", ms(poll.as_micros() as u64)),
            times(
                by_poll.each.value_at_quantile(0.99) as f64,
                poll.as_micros() as f64,
            ),
            "-",
            Verdict::Info,
        ),
        Row::new(
            format!(
                "bridge memory with {} subscribed viewers after the pushes (VmRSS)",
                count(n as u64)
            ),
            format!(
                "{:.1} MiB ({:.1} KiB/viewer)",
                rss_during as f64 / 1024.0,
                rss_during.saturating_sub(rss_before) as f64 / n as f64
            ),
            format!("before the viewers {:.1} MiB", rss_before as f64 / 1024.0),
            "-",
            "-",
            Verdict::Info,
        ),
        Row::new(
            format!(
                "master queries from the bridge during the window ({:.1} s, {} viewers)",
                window.as_secs_f64(),
                count(n as u64)
            ),
            format!("{queries:.0}"),
            format!(
                "{polls} polls (1 per {}) + {} admin commands = {bound}",
                ms(poll.as_micros() as u64),
                s.fanout_rounds
            ),
            times(queries, bound as f64),
            "≤ 1 per poll interval + 1 per admin command",
            Verdict::of(queries <= bound as f64),
        ),
    ])
}
