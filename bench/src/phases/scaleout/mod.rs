//! Scale-out: two bridges behind nginx (the proxy rules of
//! `deploy/nginx/lobby.conf`, see [`crate::procs::nginx`]) against one bridge
//! reached directly, in the same run and against the same master: idle
//! viewers held, the fan-out of a change to subscribed viewers, and the
//! list queries the bridges cost the master.

use std::{sync::atomic::Ordering::Relaxed, time::Duration, time::Instant};

use futures_util::StreamExt;

use crate::{
    direct,
    error::Result,
    phases::{
        crowd::Rounds,
        fanout::{admin_change, subscribers, AdminSink},
        memory::Viewers,
        Env,
    },
    procs::{self, nginx::Nginx, BridgeOptions},
    report::{count, q, times, Row, Verdict},
    ws,
};

const VIEWERS: &str = "bridge_connections{role=\"viewer\"}";
const QUERIES: &str = "bridge_master_queries_total";

/// Idle viewers held at `url` for `hold`: (open, errors) at the end.
async fn hold(url: String, n: usize, hold: Duration) -> Result<(Viewers, usize, usize)> {
    let mut viewers = Viewers::at(url);
    viewers.grow_to(n).await?;
    tokio::time::sleep(hold).await;
    let (open, errors) = (viewers.open.load(Relaxed), viewers.errors.load(Relaxed));
    Ok((viewers, open, errors))
}

/// `rounds` admin changes then `rounds` game-server changes seen by `n`
/// subscribers at `url`; `id` keeps markers unique across calls.
async fn fan_out(
    url: &str,
    n: usize,
    rounds: usize,
    admin: &mut AdminSink,
    game: &mut direct::Conn,
    id: u64,
) -> Result<(Rounds, Rounds)> {
    let mut subs = subscribers(url, n).await?;
    let (mut by_admin, mut by_poll) = (Rounds::new(), Rounds::new());
    for i in 0..rounds as u64 {
        let k = id + 2 * i;
        by_admin.add(
            &subs
                .round(k, 10_000 + k, admin_change(admin, 10_000 + k))
                .await?,
        );
        let current = 10_000 + k + 1;
        by_poll.add(
            &subs
                .round(
                    k + 1,
                    current,
                    direct::send(game, &direct::stats_json(current)),
                )
                .await?,
        );
    }
    subs.close().await;
    Ok((by_admin, by_poll))
}

/// Runs the scale-out figures, or one skipped row when nginx is missing.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let tools = match lobby_support::nginx::find() {
        Ok(t) => t,
        Err(why) => {
            return Ok(vec![Row::skipped(
                "scale-out: two bridges behind nginx",
                why,
            )])
        }
    };
    let opts = BridgeOptions::default();
    let poll = opts.poll_interval;
    let per_bridge = s.scaleout_viewers;
    let (master, maddr) = procs::start_master(&env.bins, 12_000).await?;
    let mut servers = direct::register_servers(maddr, s.scaleout_servers - 1, "Scale", 0).await?;
    let (a, a_addr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    let (b, b_addr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    let proxy = Nginx::start(
        &tools,
        &env.bins.work,
        &env.bins.static_dir,
        [a_addr, b_addr],
        2 * per_bridge + s.scaleout_subscribers + 16,
    )
    .await?;

    // What the bridges cost the master: counted while nobody is connected.
    let before = [
        procs::bridge_metric(a_addr, QUERIES).await?,
        procs::bridge_metric(b_addr, QUERIES).await?,
    ];
    let window_start = Instant::now();
    tokio::time::sleep(s.scaleout_window).await;
    let after = [
        procs::bridge_metric(a_addr, QUERIES).await?,
        procs::bridge_metric(b_addr, QUERIES).await?,
    ];
    let window = window_start.elapsed().as_secs_f64();
    let per_sec = [
        (after[0] - before[0]) / window,
        (after[1] - before[1]) / window,
    ];
    let both = per_sec[0] + per_sec[1];
    let expected = 2.0 / poll.as_secs_f64();
    // A window of k poll intervals holds at most k + 1 polls per bridge.
    let allowed = 2.0 * ((window / poll.as_secs_f64()).floor() + 1.0);
    let queries = (after[0] - before[0]) + (after[1] - before[1]);

    // Idle viewers: one bridge direct, then twice as many through nginx.
    let (viewers, direct_open, direct_errors) =
        hold(ws::url(a_addr), per_bridge, s.scaleout_window).await?;
    let direct_rss = a.rss_kib()?;
    viewers.close().await;
    // The bridge sees the closes a moment later; least_conn must start
    // from empty bridges.
    let drained = Instant::now();
    while procs::bridge_metric(a_addr, VIEWERS).await? > 0.0
        && drained.elapsed() < Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (viewers, proxied_open, proxied_errors) =
        hold(ws::url(proxy.addr), 2 * per_bridge, s.scaleout_window).await?;
    let on_bridges = [
        procs::bridge_metric(a_addr, VIEWERS).await? as u64,
        procs::bridge_metric(b_addr, VIEWERS).await? as u64,
    ];
    let rss = [a.rss_kib()?, b.rss_kib()?];
    viewers.close().await;

    // Fan-out: an admin's change on bridge A (pushed at once by A; B learns
    // it at its next poll), then a game server's change over TCP (both
    // bridges learn it at their next poll).
    let admin = ws::admin(&ws::url(a_addr)).await?;
    let (mut admin, mut admin_rx) = admin.split();
    tokio::spawn(async move { while let Some(Ok(_)) = admin_rx.next().await {} });
    futures_util::SinkExt::send(
        &mut admin,
        tokio_tungstenite::tungstenite::Message::text(direct::register_json("Scale probe", 29_998)),
    )
    .await?;
    let mut probe = direct::connect(maddr).await?;
    while direct::count_servers(&mut probe).await? < s.scaleout_servers {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let n = s.scaleout_subscribers;
    let rounds = s.scaleout_rounds;
    let game = &mut servers[0];
    let (direct_admin, direct_poll) =
        fan_out(&ws::url(a_addr), n, rounds, &mut admin, game, 100).await?;
    let (proxied_admin, proxied_poll) =
        fan_out(&ws::url(proxy.addr), n, rounds, &mut admin, game, 200).await?;

    proxy.stop().await;
    a.stop().await;
    b.stop().await;
    master.stop().await;

    let p99 = |r: &Rounds| r.each.value_at_quantile(0.99) as f64;
    let held_ok = proxied_errors == 0
        && proxied_open == 2 * per_bridge
        && on_bridges[0] + on_bridges[1] == (2 * per_bridge) as u64;
    Ok(vec![
        Row::new(
            format!(
                "scale-out: idle viewers held {:?} through nginx by 2 bridges",
                s.scaleout_window
            ),
            format!(
                "{} open ({} + {} per the bridges), {proxied_errors} errors; bridge RSS {:.1} + {:.1} MiB",
                count(proxied_open as u64),
                count(on_bridges[0]),
                count(on_bridges[1]),
                rss[0] as f64 / 1024.0,
                rss[1] as f64 / 1024.0
            ),
            format!(
                "1 bridge direct: {} open, {direct_errors} errors, RSS {:.1} MiB",
                count(direct_open as u64),
                direct_rss as f64 / 1024.0
            ),
            times(proxied_open as f64, direct_open as f64),
            "all held, no errors",
            Verdict::of(held_ok && direct_errors == 0),
        ),
        Row::new(
            format!(
                "scale-out: admin's change on bridge A, {} subscribers via nginx on 2 bridges ({rounds} rounds)",
                count(n as u64)
            ),
            proxied_admin.summary(n),
            format!("1 bridge direct: p50 {} / p99 {}", q(&direct_admin.each, 0.5), q(&direct_admin.each, 0.99)),
            times(p99(&proxied_admin), p99(&direct_admin)),
            "p99 ≤ poll interval + 500 ms",
            Verdict::of(p99(&proxied_admin) <= (poll.as_micros() + 500_000) as f64),
        ),
        Row::new(
            format!(
                "scale-out: game server's change over TCP, {} subscribers via nginx on 2 bridges (both wait for a poll)",
                count(n as u64)
            ),
            proxied_poll.summary(n),
            format!("1 bridge direct: p50 {} / p99 {}", q(&direct_poll.each, 0.5), q(&direct_poll.each, 0.99)),
            times(p99(&proxied_poll), p99(&direct_poll)),
            "-",
            Verdict::Info,
        ),
        Row::new(
            format!("scale-out: master list queries from 2 idle bridges ({window:.1} s)"),
            format!(
                "{both:.2}/s ({queries:.0} queries: A {:.2}/s, B {:.2}/s)",
                per_sec[0], per_sec[1]
            ),
            format!(
                "2 per poll interval ({}) = {expected:.2}/s",
                crate::report::ms(poll.as_micros() as u64)
            ),
            times(both, expected),
            "≤ 1 per poll interval per bridge",
            Verdict::of(queries <= allowed),
        ),
    ])
}
