//! The churn: one server after another changes its players, while the
//! bridge's CPU time is read around it.

use std::time::{Duration, Instant};

use crate::{
    direct::{self, Conn},
    error::Result,
    phases::Env,
    procs,
};

/// One server changes its players every `interval` for `window`, in turn
/// through the list (never twice the same count in a row); returns how many
/// changes were sent.
pub(crate) async fn churn(
    servers: &mut [Conn],
    interval: Duration,
    window: Duration,
    k: &mut u64,
) -> Result<u64> {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let start = Instant::now();
    let mut sent = 0;
    loop {
        tick.tick().await;
        if start.elapsed() >= window {
            return Ok(sent);
        }
        let i = (*k as usize).wrapping_mul(7_919) % servers.len();
        let current = 1 + *k % 997;
        direct::send(&mut servers[i], &direct::stats_json(current)).await?;
        *k += 1;
        sent += 1;
    }
}

/// Bridge CPU over one churn window: (CPU time, wall time, changes sent).
pub(super) async fn churn_cpu(
    pid: u32,
    servers: &mut [Conn],
    env: &Env,
    k: &mut u64,
) -> Result<(Duration, Duration, u64)> {
    let s = &env.sizes;
    let cpu = procs::cpu_time(pid)?;
    let t = Instant::now();
    let sent = churn(servers, s.churn_interval, s.churn_window, k).await?;
    let wall = t.elapsed();
    Ok((procs::cpu_time(pid)? - cpu, wall, sent))
}

pub(super) fn share(cpu: Duration, wall: Duration) -> f64 {
    100.0 * cpu.as_secs_f64() / wall.as_secs_f64().max(1e-9)
}
