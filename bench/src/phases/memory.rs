//! Memory per idle viewer: the bridge's resident memory before and while
//! thousands of viewers sit on open WebSockets, and that the bridge holds
//! its full connection limit without errors.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicUsize, Ordering::Relaxed},
        Arc,
    },
    time::Duration,
};

use futures_util::StreamExt;
use tokio::{sync::Semaphore, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use lobby_testkit::metrics;

use crate::{
    error::{within_for, Error, Result},
    phases::Env,
    procs,
    report::{count, Row, Verdict},
    ws,
};

/// Idle viewers opened by the load generator (this process: the bridge
/// runs in its own, so each stays under the file-descriptor limit).
pub(crate) struct Viewers {
    url: String,
    connecting: Arc<Semaphore>,
    stop: CancellationToken,
    pub(crate) open: Arc<AtomicUsize>,
    pub(crate) errors: Arc<AtomicUsize>,
    tasks: Vec<JoinHandle<()>>,
}

impl Viewers {
    fn new(bridge: SocketAddr) -> Self {
        Self::at(ws::url(bridge))
    }

    /// Viewers of the WebSocket at `url` (a bridge, or nginx before some).
    pub(crate) fn at(url: String) -> Self {
        Self {
            url,
            connecting: Arc::new(Semaphore::new(64)),
            stop: CancellationToken::new(),
            open: Arc::new(AtomicUsize::new(0)),
            errors: Arc::new(AtomicUsize::new(0)),
            tasks: Vec::new(),
        }
    }

    /// Opens viewers until `total` are open (or failed).
    pub(crate) async fn grow_to(&mut self, total: usize) -> Result<()> {
        for _ in self.tasks.len()..total {
            let (url, connecting, stop) =
                (self.url.clone(), self.connecting.clone(), self.stop.clone());
            let (open, errors) = (self.open.clone(), self.errors.clone());
            self.tasks.push(tokio::spawn(async move {
                let Ok(permit) = connecting.acquire_owned().await else {
                    return;
                };
                let mut socket = match ws::connect_small(&url).await {
                    Ok(s) => s,
                    Err(e) => {
                        if errors.fetch_add(1, Relaxed) == 0 {
                            eprintln!("[loadgen] viewer failed to connect: {e}");
                        }
                        return;
                    }
                };
                drop(permit);
                open.fetch_add(1, Relaxed);
                // Idle: read only to answer the bridge's pings.
                loop {
                    tokio::select! {
                        () = stop.cancelled() => break,
                        msg = socket.next() => match msg {
                            Some(Ok(_)) => continue,
                            _ => {
                                if errors.fetch_add(1, Relaxed) == 0 {
                                    eprintln!("[loadgen] an idle viewer was disconnected: {msg:?}");
                                }
                                open.fetch_sub(1, Relaxed);
                                break;
                            }
                        },
                    }
                }
            }));
        }
        // A full run connects thousands of viewers.
        within_for(Duration::from_secs(300), "viewers connected", async {
            while self.open.load(Relaxed) + self.errors.load(Relaxed) < total {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(())
        })
        .await
    }

    pub(crate) async fn close(self) {
        self.stop.cancel();
        for t in self.tasks {
            let _ = t.await;
        }
    }
}

/// Runs the memory figures.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let (master, maddr) = procs::start_master(&env.bins, 12_000).await?;
    let (bridge, baddr) = procs::start_bridge(&env.bins, maddr, &procs::bridge(&env.bins)).await?;
    // Warm the bridge: its first list, one WebSocket opened and closed.
    {
        let mut w = ws::connect(&ws::url(baddr)).await?;
        ws::query(&mut w).await?;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = bridge.rss_kib()?;

    let mut viewers = Viewers::new(baddr);
    viewers.grow_to(s.idle_viewers).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let during = bridge.rss_kib()?;
    let per = (during.saturating_sub(before)) as f64 / s.idle_viewers as f64;
    let first_errors = viewers.errors.load(Relaxed);

    viewers.grow_to(s.held_viewers).await?;
    tokio::time::sleep(s.hold_time).await;
    let held_rss = bridge.rss_kib()?;
    let bridge_count = metrics::scrape(baddr, "bridge_connections{role=\"viewer\"}")
        .await
        .map_err(Error::Unexpected)? as usize;
    let open = viewers.open.load(Relaxed);
    let errors = viewers.errors.load(Relaxed);
    viewers.close().await;
    bridge.stop().await;
    master.stop().await;

    let per_held = (held_rss.saturating_sub(before)) as f64 / s.held_viewers as f64;
    let held_ok = errors == 0 && open == s.held_viewers && bridge_count == s.held_viewers;
    Ok(vec![
        Row::new(
            format!(
                "memory per idle viewer ({} idle viewer WebSockets, bridge VmRSS)",
                count(s.idle_viewers as u64)
            ),
            format!(
                "{per:.1} KiB/conn (RSS {:.1} MiB, {first_errors} errors)",
                during as f64 / 1024.0
            ),
            format!("RSS before {:.1} MiB", before as f64 / 1024.0),
            "-",
            "≤ 16 KiB/conn",
            Verdict::of(per <= 16.0 && first_errors == 0),
        ),
        Row::new(
            format!(
                "{} idle viewers held for {:?}",
                count(s.held_viewers as u64),
                s.hold_time
            ),
            format!(
                "{} open ({} per the bridge), {errors} errors, RSS {:.1} MiB ({per_held:.1} KiB/conn)",
                count(open as u64),
                count(bridge_count as u64),
                held_rss as f64 / 1024.0
            ),
            format!("RSS before {:.1} MiB", before as f64 / 1024.0),
            "-",
            "all held, no errors",
            Verdict::of(held_ok),
        ),
    ])
}
