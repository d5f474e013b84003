//! The product's `/metrics` (Prometheus text) as tests and benchmarks
//! read it: one sample by its name with labels.

use std::net::SocketAddr;

use crate::http;

/// One sample of a Prometheus text exposition, by its name with labels
/// (`bridge_connections{role="viewer"}`); comments are skipped.
pub fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.rsplit_once(' ').filter(|(k, _)| *k == name))
        .and_then(|(_, v)| v.trim().parse().ok())
}

/// One reading of the `/metrics` served at `addr` (a bridge): several
/// samples taken from it belong to the same moment.
#[derive(Debug, Clone)]
pub struct Scrape {
    addr: SocketAddr,
    text: String,
}

impl Scrape {
    /// Reads `/metrics` at `addr` once, or says why it could not.
    pub async fn of(addr: SocketAddr) -> Result<Scrape, String> {
        let answer = http::get_ok(addr, "/metrics", "").await?;
        Ok(Scrape {
            addr,
            text: answer.text(),
        })
    }

    /// The sample `name` of this reading, or an error naming it: a
    /// metric the product no longer exports fails loudly.
    pub fn sample(&self, name: &str) -> Result<f64, String> {
        sample(&self.text, name).ok_or_else(|| format!("no {name} in /metrics at {}", self.addr))
    }
}

/// One sample of the `/metrics` served at `addr` (a bridge), or why not.
pub async fn scrape(addr: SocketAddr, name: &str) -> Result<f64, String> {
    Scrape::of(addr).await?.sample(name)
}

/// [`scrape`] that must succeed (a test's bridge is up).
pub async fn metric(addr: SocketAddr, name: &str) -> f64 {
    scrape(addr, name)
        .await
        .unwrap_or_else(|e| panic!("{addr}: {e}"))
}

/// Waits until the sample `name` satisfies `ok`; its value then.
pub async fn until_metric(addr: SocketAddr, name: &str, ok: impl Fn(f64) -> bool) -> f64 {
    try_until_metric(addr, name, ok)
        .await
        .unwrap_or_else(|hung| panic!("{hung}"))
}

/// [`until_metric`] that returns [`crate::Hung`] instead of panicking (a
/// benchmark's phase fails and the run goes on).
pub async fn try_until_metric(
    addr: SocketAddr,
    name: &str,
    ok: impl Fn(f64) -> bool,
) -> Result<f64, crate::Hung> {
    crate::try_until(&format!("{name} at {addr} as expected"), || async {
        let v = scrape(addr, name).await?;
        if ok(v) {
            Ok(v)
        } else {
            Err(format!("{name} is {v}"))
        }
    })
    .await
}

/// Waits until the sample `name` is at least `at_least`.
pub async fn metric_reaches(addr: SocketAddr, name: &str, at_least: f64) -> f64 {
    until_metric(addr, name, |v| v >= at_least).await
}
