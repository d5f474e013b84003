//! What one list change costs the processes that pass it on: CPU time
//! (user + system, from `/proc`) per stats change while one server after
//! another changes, with nobody watching, for a small list (the baseline)
//! and a large one. Three paths: the bridge with the master inside it, and
//! a master's change feed followed by a bridge (the master's CPU and the
//! bridge's). Work in proportion to the change keeps the large list's
//! figure near the small one's. Each figure is the median of a few
//! windows one after another, so that one window disturbed by the shared
//! machine (now and then half again as high) does not decide it.

use std::{net::SocketAddr, time::Duration};

use lobby_testkit::try_until;

use crate::{
    direct::{self, Conn},
    error::Result,
    phases::{
        deltas::{churn::churn, list::api_list},
        Env,
    },
    procs::{self, BridgeLaunch, MasterFeed, Proc},
    report::{count, median, Row, Verdict},
};

/// CPU per change of each path at one list size, in µs.
#[derive(Debug, Clone, Copy)]
struct Costs {
    embedded: f64,
    feed_master: f64,
    feed_bridge: f64,
}

/// One path: its name, its target at the large size (µs per change), and
/// how its figure is read from [`Costs`].
struct Path {
    name: &'static str,
    target: f64,
    of: fn(&Costs) -> f64,
}

const PATHS: [Path; 3] = [
    Path {
        name: "embedded bridge",
        target: 150.0,
        of: |c| c.embedded,
    },
    Path {
        name: "feed: master",
        target: 100.0,
        of: |c| c.feed_master,
    },
    Path {
        name: "feed: bridge",
        target: 100.0,
        of: |c| c.feed_bridge,
    },
];

/// Waits until the bridge at `bridge` lists `n` servers.
async fn listed(bridge: SocketAddr, n: usize) -> Result<()> {
    let what = format!("{n} servers listed by the bridge");
    Ok(try_until(&what, || async {
        match api_list(bridge).await {
            Ok(l) if l.servers >= n => Ok(()),
            Ok(l) => Err(format!("{} listed", l.servers)),
            Err(e) => Err(e.to_string()),
        }
    })
    .await?)
}

/// The CPU each of `procs` spends per change, in µs: the median of
/// [`crate::sizes::Sizes::change_cost_windows`] windows of changes.
async fn measure(env: &Env, servers: &mut [Conn], procs: &[&Proc]) -> Result<Vec<f64>> {
    let s = &env.sizes;
    // Settle: registrations and the first lists are not what is measured.
    let settle = if s.smoke { 100 } else { 500 };
    tokio::time::sleep(Duration::from_millis(settle)).await;
    let mut k = 0;
    let mut windows = vec![Vec::new(); procs.len()];
    for _ in 0..s.change_cost_windows.max(1) {
        for (spent, figure) in windows
            .iter_mut()
            .zip(window(env, servers, procs, &mut k).await?)
        {
            spent.push(figure);
        }
    }
    Ok(windows.iter().map(|w| median(w)).collect())
}

/// One window of changes (numbered on from `k`), and the CPU each of
/// `procs` spent meanwhile, in µs per change.
async fn window(env: &Env, servers: &mut [Conn], procs: &[&Proc], k: &mut u64) -> Result<Vec<f64>> {
    let s = &env.sizes;
    let before = procs
        .iter()
        .map(|p| procs::cpu_time(p.pid()))
        .collect::<lobby_testkit::Result<Vec<_>>>()?;
    let sent = churn(servers, s.change_cost_interval, s.change_cost_window, k).await?;
    // The last changes are gathered for a few milliseconds before they
    // are passed on: counted too.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let sent = sent.max(1) as f64;
    procs
        .iter()
        .zip(before)
        .map(|(p, before)| {
            let spent = procs::cpu_time(p.pid())?.saturating_sub(before);
            Ok(spent.as_secs_f64() * 1e6 / sent)
        })
        .collect()
}

/// The bridges' options: the history samples the list once per interval
/// whatever its changes (its own figures are the history phase's), so one
/// an hour keeps a sample of the whole list out of the changes' window.
fn bridge_options(env: &Env) -> BridgeLaunch {
    BridgeLaunch {
        history_interval: Some(Duration::from_secs(3600)),
        ..procs::bridge(&env.bins)
    }
}

/// The three paths at `n` servers.
async fn costs(env: &Env, n: usize) -> Result<Costs> {
    let opts = bridge_options(env);
    // The master inside the bridge.
    let (bridge, baddr, maddr) = procs::start_bridge_embedded(&env.bins, &opts).await?;
    let mut servers = direct::register_servers(maddr, n, "Cost", 0).await?;
    listed(baddr, n).await?;
    let embedded = measure(env, &mut servers, &[&bridge]).await?[0];
    drop(servers);
    bridge.stop().await;

    // A master's feed, followed by a bridge.
    let (master, maddr, feed) = procs::start_master_with_feed(&env.bins, n + 100).await?;
    let mut servers = direct::register_servers(maddr, n, "Cost", 0).await?;
    let opts = BridgeLaunch {
        master_feed: MasterFeed::At(feed),
        ..bridge_options(env)
    };
    let (bridge, baddr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    listed(baddr, n).await?;
    let fed = measure(env, &mut servers, &[&master, &bridge]).await?;
    drop(servers);
    bridge.stop().await;
    master.stop().await;
    Ok(Costs {
        embedded,
        feed_master: fed[0],
        feed_bridge: fed[1],
    })
}

/// Runs the change-cost figures: each path at the large list beside its
/// figure at the small one, from the same run.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let [small, large] = s.change_cost_servers;
    let base = costs(env, small).await?;
    let big = costs(env, large).await?;
    let rate = 1.0 / s.change_cost_interval.as_secs_f64().max(1e-9);
    let windows = match s.change_cost_windows {
        0 | 1 => String::new(),
        n => format!(", the median of {n} such windows"),
    };
    Ok(PATHS
        .iter()
        .map(|Path { name, target, of }| {
            let (value, baseline) = (of(&big), of(&base));
            // Below one clock tick at the small size (smoke runs): no ratio.
            let ratio = (baseline > 0.0).then(|| value / baseline);
            Row::new(
                format!(
                    "change cost, {name} ({} servers, {rate:.0} stats changes/s for {:?}{windows}, \
                     no viewers; CPU from /proc)",
                    count(large as u64),
                    s.change_cost_window,
                ),
                format!("{value:.0} µs/change"),
                format!("{baseline:.0} µs/change at {} servers", count(small as u64)),
                ratio.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}×")),
                format!("≤ {target:.0} µs, ≤ 2× the baseline"),
                Verdict::of(value <= *target && ratio.is_some_and(|r| r <= 2.0)),
            )
        })
        .collect())
}
