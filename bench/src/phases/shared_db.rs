//! Bridges sharing one PostgreSQL database behind one master, as
//! docs/deploying.md deploys them: a scratch cluster
//! (`lobby_testkit::postgres::Cluster`, as the handover phase's), a master
//! with its change feed, and bridges following it (`--master`,
//! `--master-feed`) with one `--database-url`. The notification phases run
//! their figures on it beside their one-bridge baseline.
//!
//! A bridge polls the master until its feed answers, which may be a while
//! after its ready line on a busy machine. While it polls it reads the
//! master's plain reply, which does not say who registered an entry, so a
//! server claiming an address other than its connection's (every
//! benchmark game server: `192.168.0.10`, registered from loopback) gets a
//! key other than the one the feed gives it (SECURITY.md, "the poll
//! path"). [`Shared::start`] therefore returns once every bridge follows
//! the feed: then every bridge keys every server alike, and a key read on
//! one bridge names the same server on the others.

use std::net::SocketAddr;

use lobby_testkit::{
    metrics,
    postgres::{self, Cluster},
    try_until,
};

use crate::{
    error::{Error, Result},
    phases::Env,
    procs::{self, BridgeLaunch, MasterFeed, Proc},
};

/// 1 while a bridge follows the master's change feed, 0 while it polls.
const FEED_UP: &str = "bridge_master_feed_up";

/// The running set; [`Shared::stop_and_count`] ends it.
pub struct Shared {
    cluster: Cluster,
    db: &'static str,
    master: Proc,
    /// The master's address (game servers register there).
    pub master_addr: SocketAddr,
    /// The bridges and their HTTP addresses.
    pub bridges: Vec<(Proc, SocketAddr)>,
}

/// Why the shared set cannot run here (PostgreSQL is missing), if so.
pub fn unavailable() -> Option<String> {
    postgres::find_bin().err().map(|e| e.to_string())
}

impl Shared {
    /// A fresh cluster with database `db`, a master with its feed taking
    /// `max_servers`, and `n` bridges with `opts` sharing the database,
    /// each following the master's feed once this returns.
    pub async fn start(
        env: &Env,
        db: &'static str,
        n: usize,
        max_servers: usize,
        opts: BridgeLaunch,
    ) -> Result<Self> {
        let (cluster, url) = tokio::task::spawn_blocking(move || {
            let cluster = Cluster::start()?;
            let url = cluster.create_database(db)?;
            Ok::<_, lobby_testkit::Error>((cluster, url))
        })
        .await
        .map_err(|e| Error::Unexpected(e.to_string()))??;
        let (master, master_addr, feed) =
            procs::start_master_with_feed(&env.bins, max_servers).await?;
        let opts = BridgeLaunch {
            master_feed: MasterFeed::At(feed),
            database_url: Some(url),
            ..opts
        };
        let mut bridges = Vec::with_capacity(n);
        for _ in 0..n {
            bridges.push(procs::start_bridge(&env.bins, master_addr, &opts).await?);
        }
        // Following the feed, not polling: the keys agree (see the module).
        for (_, addr) in &bridges {
            metrics::try_until_metric(*addr, FEED_UP, |v| v == 1.0).await?;
        }
        Ok(Self {
            cluster,
            db,
            master,
            master_addr,
            bridges,
        })
    }

    /// The bridges' HTTP addresses.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.bridges.iter().map(|(_, a)| *a).collect()
    }

    /// Waits until every bridge's `/metrics` sample `name` is `value`
    /// (each has read a change made through one of them).
    pub async fn all_say(&self, name: &str, value: f64) -> Result<()> {
        for addr in self.addrs() {
            metrics::try_until_metric(addr, name, |v| v == value).await?;
        }
        Ok(())
    }

    /// Each bridge's sample `name`, in order.
    pub async fn each(&self, name: &str) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(self.bridges.len());
        for addr in self.addrs() {
            out.push(
                metrics::scrape(addr, name)
                    .await
                    .map_err(Error::Unexpected)?,
            );
        }
        Ok(out)
    }

    /// Waits until the bridges' samples `name` add up to at least `total`.
    pub async fn sum_reaches(&self, name: &str, total: f64) -> Result<()> {
        let what = format!("{name} adding up to {total}");
        Ok(try_until(&what, || async {
            let sum: f64 = self.each(name).await?.iter().sum();
            if sum >= total {
                Ok(())
            } else {
                Err(Error::Unexpected(format!("{sum} so far")))
            }
        })
        .await?)
    }

    /// Stops the bridges and the master, then asks the database `sql` (one
    /// number: a count) and removes the cluster.
    pub async fn stop_and_count(self, sql: &'static str) -> Result<i64> {
        for (b, _) in self.bridges {
            b.stop().await;
        }
        self.master.stop().await;
        let (cluster, db) = (self.cluster, self.db);
        let text = tokio::task::spawn_blocking(move || {
            let text = cluster.query(db, sql);
            drop(cluster);
            text
        })
        .await
        .map_err(|e| Error::Unexpected(e.to_string()))??;
        text.trim()
            .parse()
            .map_err(|_| Error::Unexpected(format!("{sql}: {text:?}")))
    }
}

/// `a / b / c` of per-bridge counts.
pub fn split(counts: &[f64]) -> String {
    counts
        .iter()
        .map(|c| format!("{c:.0}"))
        .collect::<Vec<_>>()
        .join(" / ")
}
