//! Waiting in tests: on a signal the product gives, never on the clock.
//! The one bound, [`HUNG`], only fails a test that hangs; it does not
//! judge speed, so a slow or busy machine is slow, not red.

use std::{fmt::Display, future::Future, time::Duration};

use tokio::time::Instant;

/// How long any wait of a test may go on before the test is called hung.
/// Generous on purpose: Chromium's first start, a scratch PostgreSQL
/// cluster or a process's ready line beside a compiler on two cores take
/// seconds; nothing the product promises is measured with it (promises of
/// speed are benchmarks, `bench/`).
pub const HUNG: Duration = Duration::from_secs(60);

/// How often [`until`] looks again.
pub const POLL: Duration = Duration::from_millis(20);

/// A wait that went on for [`HUNG`]: what was awaited and the last thing
/// its probe saw. [`until`] panics with it; [`try_until`] returns it, for
/// a benchmark, which reports a phase that failed and goes on.
#[derive(Debug, thiserror::Error)]
#[error("hung: {what} did not happen within {HUNG:?}; last seen: {seen}")]
pub struct Hung {
    /// What was awaited.
    pub what: String,
    /// The probe's last `Err`, in words.
    pub seen: String,
}

/// Polls `probe` every [`POLL`] until it returns `Ok`; panics after
/// [`HUNG`] with `what` and the last thing `probe` saw (its `Err`).
pub async fn until<T, E, F, Fut>(what: &str, probe: F) -> T
where
    E: Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    try_until(what, probe)
        .await
        .unwrap_or_else(|hung| panic!("{hung}"))
}

/// [`until`] that returns [`Hung`] instead of panicking after [`HUNG`].
pub async fn try_until<T, E, F, Fut>(what: &str, mut probe: F) -> Result<T, Hung>
where
    E: Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let start = Instant::now();
    loop {
        match probe().await {
            Ok(v) => return Ok(v),
            Err(seen) if start.elapsed() >= HUNG => {
                return Err(Hung {
                    what: what.to_owned(),
                    seen: seen.to_string(),
                })
            }
            Err(_) => tokio::time::sleep(POLL).await,
        }
    }
}

/// [`until`] for a plain condition: polls `check` until it holds.
pub async fn until_true(what: &str, mut check: impl FnMut() -> bool) {
    until(what, || {
        let held = check();
        async move {
            if held {
                Ok(())
            } else {
                Err("not yet")
            }
        }
    })
    .await
}

/// Awaits `wait` (something the product will do: a message, a close, an
/// exit); panics naming `what` if it has not happened within [`HUNG`].
pub async fn bounded<F: Future>(what: &str, wait: F) -> F::Output {
    try_bounded(what, wait)
        .await
        .unwrap_or_else(|hung| panic!("{hung}"))
}

/// [`bounded`] that returns [`Hung`] instead of panicking, for the
/// benchmarks and for the kit's own helpers that report failures as values.
pub async fn try_bounded<F: Future>(what: &str, wait: F) -> Result<F::Output, Hung> {
    tokio::time::timeout(HUNG, wait).await.map_err(|_| Hung {
        what: what.to_owned(),
        seen: "no answer".to_owned(),
    })
}

/// Runs `wait` and returns how long it took: the figure a drill reports
/// (reported, never asserted).
pub async fn timed<F: Future>(wait: F) -> Duration {
    let start = Instant::now();
    wait.await;
    start.elapsed()
}

/// Blocking [`until`] for code off the runtime (a thread that watches a
/// child process): polls `probe` every [`POLL`], panics after [`HUNG`].
pub fn until_blocking<T, E: Display>(what: &str, mut probe: impl FnMut() -> Result<T, E>) -> T {
    let start = std::time::Instant::now();
    loop {
        match probe() {
            Ok(v) => return v,
            Err(seen) if start.elapsed() >= HUNG => {
                panic!("hung: {what} did not happen within {HUNG:?}; last seen: {seen}")
            }
            Err(_) => std::thread::sleep(POLL),
        }
    }
}
