//! Scale-out: two bridges behind nginx (the proxy rules of
//! `deploy/nginx/lobby.conf`, see [`crate::procs::nginx`]) against one bridge
//! reached directly, in the same run and against the same master, both
//! bridges following the master's change feed (`--master-feed`): idle
//! viewers held, and the fan-out of a change to subscribed viewers. Then
//! ([`idle`]) what eight idle bridges cost the master, following its feed
//! or polling it.

mod idle;

use std::{path::PathBuf, sync::atomic::Ordering::Relaxed, time::Duration};

use futures_util::StreamExt;

use lobby_testkit::metrics;

use crate::{
    direct,
    error::{Error, Result},
    phases::{
        crowd::Rounds,
        fanout::{admin_change, subscribers, AdminSink},
        memory::Viewers,
        Env,
    },
    procs::{self, nginx, BridgeLaunch, MasterFeed},
    report::{count, q, times, Row, Verdict},
    ws,
};

const VIEWERS: &str = "bridge_connections{role=\"viewer\"}";

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
    let (mut by_admin, mut by_game) = (Rounds::new(), Rounds::new());
    for i in 0..rounds as u64 {
        let k = id + 2 * i;
        by_admin.add(
            &subs
                .round(k, 10_000 + k, admin_change(admin, 10_000 + k))
                .await?,
        );
        let current = 10_000 + k + 1;
        by_game.add(
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
    Ok((by_admin, by_game))
}

/// Runs the scale-out figures (one skipped row when nginx is missing), then
/// the idle bridges' cost to the master.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let mut rows = match lobby_testkit::nginx::find() {
        Ok(tools) => Box::pin(proxied(env, &tools)).await?,
        Err(why) => vec![Row::skipped("scale-out: two bridges behind nginx", why)],
    };
    rows.extend(Box::pin(idle::run(env)).await?);
    Ok(rows)
}

/// Waits until the bridge at `addr` follows the master's change feed.
async fn feed_up(addr: std::net::SocketAddr) -> Result<()> {
    metrics::try_until_metric(addr, "bridge_master_feed_up", |v| v == 1.0).await?;
    Ok(())
}

/// Two bridges that follow the master's feed, behind nginx and direct.
async fn proxied(env: &Env, tools: &(PathBuf, PathBuf)) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let per_bridge = s.scaleout_viewers;
    let (master, maddr, feed) = procs::start_master_with_feed(&env.bins, 12_000).await?;
    let opts = BridgeLaunch {
        master_feed: MasterFeed::At(feed),
        ..procs::bridge(&env.bins)
    };
    let mut servers = direct::register_servers(maddr, s.scaleout_servers - 1, "Scale", 0).await?;
    let (a, a_addr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    let (b, b_addr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    feed_up(a_addr).await?;
    feed_up(b_addr).await?;
    let proxy = nginx::start(
        tools,
        &env.bins.work,
        &env.bins.static_dir,
        [a_addr, b_addr],
        2 * per_bridge + s.scaleout_subscribers + 16,
    )
    .await?;

    // Idle viewers: one bridge direct, then twice as many through nginx.
    let (viewers, direct_open, direct_errors) =
        hold(ws::url(a_addr), per_bridge, s.scaleout_window).await?;
    let direct_rss = a.rss_kib()?;
    viewers.close().await;
    // The bridge sees the closes a moment later; least_conn must start
    // from empty bridges.
    metrics::try_until_metric(a_addr, VIEWERS, |v| v == 0.0).await?;
    let (viewers, proxied_open, proxied_errors) =
        hold(ws::url(proxy.main), 2 * per_bridge, s.scaleout_window).await?;
    let on_bridges = [
        metrics::scrape(a_addr, VIEWERS)
            .await
            .map_err(Error::Unexpected)? as u64,
        metrics::scrape(b_addr, VIEWERS)
            .await
            .map_err(Error::Unexpected)? as u64,
    ];
    let rss = [a.rss_kib()?, b.rss_kib()?];
    viewers.close().await;

    // Fan-out: an admin's change on bridge A, then a game server's change
    // over TCP: both bridges learn either from the master's feed.
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
    let (direct_admin, direct_game) =
        fan_out(&ws::url(a_addr), n, rounds, &mut admin, game, 100).await?;
    let (proxied_admin, proxied_game) =
        fan_out(&ws::url(proxy.main), n, rounds, &mut admin, game, 200).await?;

    drop(proxy);
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
                "scale-out: admin's change on bridge A, {} subscribers via nginx on 2 bridges following the feed ({rounds} rounds)",
                count(n as u64)
            ),
            proxied_admin.summary(n),
            format!("1 bridge direct: p50 {} / p99 {}", q(&direct_admin.each, 0.5), q(&direct_admin.each, 0.99)),
            times(p99(&proxied_admin), p99(&direct_admin)),
            "p99 ≤ 150 ms",
            Verdict::of(p99(&proxied_admin) <= 150_000.0),
        ),
        Row::new(
            format!(
                "scale-out: game server's change over TCP, {} subscribers via nginx on 2 bridges following the feed ({rounds} rounds)",
                count(n as u64)
            ),
            proxied_game.summary(n),
            format!("1 bridge direct: p50 {} / p99 {}", q(&direct_game.each, 0.5), q(&direct_game.each, 0.99)),
            times(p99(&proxied_game), p99(&direct_game)),
            "p99 ≤ 150 ms",
            Verdict::of(p99(&proxied_game) <= 150_000.0),
        ),
    ])
}
