//! Soak: rounds of thousands of viewers that connect, subscribe, receive
//! the list, stay until all of them are in, and leave, with the bridge's
//! resident memory read after every round. Fails when that memory trends
//! upward (a per-connection leak).

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering::Relaxed},
        Arc,
    },
    time::{Duration, Instant},
};

use futures_util::StreamExt;
use tokio::{
    sync::{OwnedSemaphorePermit, Semaphore},
    task::JoinSet,
};
use tokio_util::sync::CancellationToken;

use lobby_testkit::metrics;

use crate::{
    direct::{self, REPLY_PREFIX},
    error::{within, within_for, Error, Result},
    phases::Env,
    procs,
    report::{count, Row, Verdict},
    ws,
};

/// Viewers connecting at once (the rest wait for a slot).
const CONNECTING: usize = 64;
/// The allowed rise of the fitted RSS line over the measured rounds: the
/// larger of this many KiB …
const ALLOWED_RISE_KIB: f64 = 4096.0;
/// … and this share of the first measured round's RSS.
const ALLOWED_RISE_SHARE: f64 = 0.10;

/// Whether a series of RSS readings (KiB, one per round after the warm-up
/// round) trends upward: the least-squares line through them rises by more
/// than [`ALLOWED_RISE_KIB`] or [`ALLOWED_RISE_SHARE`] of the first reading
/// (whichever is larger) from the first round to the last. A leak of 1 KiB
/// per viewer with 3,000 viewers a round rises 3 MiB a round; allocator
/// noise (the allocator keeps what the last round's peak needed, ±2 MiB
/// from round to round with 3,000 viewers) stays below the bound, which
/// still catches a leak of 0.3 KiB per viewer over 7 rounds. Returns the
/// fitted rise in KiB.
pub fn rss_trend(readings: &[u64]) -> (f64, bool) {
    if readings.len() < 2 {
        return (0.0, false);
    }
    let n = readings.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = readings.iter().map(|&y| y as f64).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (x, &y) in readings.iter().enumerate() {
        let dx = x as f64 - mean_x;
        sxy += dx * (y as f64 - mean_y);
        sxx += dx * dx;
    }
    let rise = sxy / sxx * (n - 1.0);
    let allowed = ALLOWED_RISE_KIB.max(readings[0] as f64 * ALLOWED_RISE_SHARE);
    (rise, rise > allowed)
}

/// One viewer's life: connect, subscribe, wait for the list, then stay
/// until `leave` fires and close.
async fn viewer(
    url: &str,
    slot: OwnedSemaphorePermit,
    in_round: &AtomicUsize,
    leave: CancellationToken,
) -> Result<()> {
    let mut socket = ws::connect_small(url).await?;
    ws::send(&mut socket, r#"{"command":"bridgeSubscribe"}"#).await?;
    within("the list after subscribing", async {
        while !ws::next_text(&mut socket)
            .await?
            .as_str()
            .starts_with(REPLY_PREFIX)
        {}
        Ok(())
    })
    .await?;
    drop(slot);
    in_round.fetch_add(1, Relaxed);
    // Read meanwhile (pings), so the bridge never waits on this viewer.
    tokio::select! {
        () = leave.cancelled() => {}
        _ = async { while let Some(Ok(_)) = socket.next().await {} } => {
            return Err(Error::Unexpected("the bridge closed a soak viewer".into()));
        }
    }
    socket.close(None).await?;
    Ok(())
}

/// One round: `n` viewers connect and subscribe (at most [`CONNECTING`]
/// at once) and stay until all are in; then the bridge's RSS is read and
/// they all leave. Returns how many failed and the RSS with all of them in.
async fn round(url: &str, n: usize, bridge: &procs::Proc) -> Result<(usize, u64)> {
    let slots = Arc::new(Semaphore::new(CONNECTING));
    let failed = Arc::new(AtomicUsize::new(0));
    let in_round = Arc::new(AtomicUsize::new(0));
    let leave = CancellationToken::new();
    let mut set = JoinSet::new();
    for _ in 0..n {
        let (url, slots, failed, in_round, leave) = (
            url.to_owned(),
            slots.clone(),
            failed.clone(),
            in_round.clone(),
            leave.clone(),
        );
        set.spawn(async move {
            let Ok(slot) = slots.acquire_owned().await else {
                return;
            };
            if let Err(e) = viewer(&url, slot, &in_round, leave).await {
                if failed.fetch_add(1, Relaxed) == 0 {
                    eprintln!("[loadgen] soak viewer failed: {e}");
                }
            }
        });
    }
    // A full run's round subscribes thousands of viewers.
    let all_in = within_for(
        Duration::from_secs(120),
        "every soak viewer subscribed",
        async {
            while in_round.load(Relaxed) + failed.load(Relaxed) < n {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(())
        },
    )
    .await;
    let peak = bridge.rss_kib();
    leave.cancel();
    while set.join_next().await.is_some() {}
    all_in?;
    Ok((failed.load(Relaxed), peak?))
}

/// Runs the soak figure.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let (master, maddr) = procs::start_master(&env.bins, 12_000).await?;
    let _servers = direct::register_servers(maddr, s.soak_servers, "Soak", 0).await?;
    let (bridge, baddr) = procs::start_bridge(&env.bins, maddr, &procs::bridge(&env.bins)).await?;
    let url = ws::url(baddr);
    let start_rss = bridge.rss_kib()?;

    let mut readings = Vec::with_capacity(s.soak_rounds);
    let mut peaks = Vec::with_capacity(s.soak_rounds);
    let mut failed = 0;
    let started = Instant::now();
    for i in 1..=s.soak_rounds {
        let t = Instant::now();
        let (round_failed, peak) = round(&url, s.soak_viewers, &bridge).await?;
        failed += round_failed;
        // Every viewer has left once the bridge counts none.
        metrics::try_until_metric(baddr, "bridge_connections{role=\"viewer\"}", |v| v == 0.0)
            .await?;
        let rss = bridge.rss_kib()?;
        eprintln!(
            "[loadgen] soak round {i}/{}: {} viewers in {:.1?}, bridge RSS {:.1} MiB with all of \
             them subscribed, {:.1} MiB after they left",
            s.soak_rounds,
            s.soak_viewers,
            t.elapsed(),
            peak as f64 / 1024.0,
            rss as f64 / 1024.0
        );
        peaks.push(peak);
        readings.push(rss);
    }
    let elapsed = started.elapsed();
    bridge.stop().await;
    master.stop().await;

    // Round 1 is the warm-up (allocator pools, the first lists).
    let measured = readings.get(1..).unwrap_or_default();
    let (rise, upward) = rss_trend(measured);
    let series = readings
        .iter()
        .map(|k| format!("{:.1}", *k as f64 / 1024.0))
        .collect::<Vec<_>>()
        .join(", ");
    let total = s.soak_rounds * s.soak_viewers;
    if upward {
        return Err(Error::Unexpected(format!(
            "bridge RSS trends upward over the soak rounds: fitted rise {:.1} MiB over rounds \
             2..{} (RSS per round, MiB: {series})",
            rise / 1024.0,
            s.soak_rounds
        )));
    }
    if failed > 0 {
        return Err(Error::Unexpected(format!(
            "{failed} of {total} soak viewers failed"
        )));
    }
    Ok(vec![Row::new(
        format!(
            "soak: {} rounds × {} viewers connect, subscribe, get the list, all leave ({} in {:.0?})",
            s.soak_rounds,
            count(s.soak_viewers as u64),
            count(total as u64),
            elapsed
        ),
        format!(
            "bridge RSS after each round (MiB): {series}; fitted rise after round 1 {:+.1} MiB; \
             with all {} subscribed: {:.1}–{:.1} MiB; 0 errors",
            rise / 1024.0,
            count(s.soak_viewers as u64),
            peaks.iter().min().copied().unwrap_or(0) as f64 / 1024.0,
            peaks.iter().max().copied().unwrap_or(0) as f64 / 1024.0
        ),
        format!("RSS before the viewers {:.1} MiB", start_rss as f64 / 1024.0),
        "-",
        "no upward trend (fitted rise ≤ max(4 MiB, 10 %))",
        Verdict::of(true),
    )])
}

#[cfg(test)]
mod tests {
    use super::rss_trend;

    #[test]
    fn flat_or_noisy_memory_passes_and_a_leak_fails() {
        assert!(!rss_trend(&[40_000, 40_200, 39_900, 40_100, 40_000]).1);
        assert!(!rss_trend(&[40_000]).1);
        // 3 MiB a round, like 1 KiB per viewer with 3,000 viewers.
        let leak: Vec<u64> = (0..6).map(|i| 40_000 + i * 3072).collect();
        let (rise, upward) = rss_trend(&leak);
        assert!(upward);
        assert!((rise - 5.0 * 3072.0).abs() < 1.0);
        // A step down (memory returned) is not a rise.
        assert!(!rss_trend(&[50_000, 45_000, 45_100, 44_900]).1);
    }
}
