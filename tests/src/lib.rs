//! Harness for the lobby's end-to-end tests (`tests/*.rs`): finds the
//! Trunk-built front end and the built binaries, runs the product under
//! test (the real `bridge` and `master`, [`product`]) and `chromedriver` as
//! child processes that are killed on drop (also when a test panics), drives
//! headless Chromium over WebDriver through page objects ([`pages`]), and
//! plays game servers over raw TCP.
//! Stand-ins for parts of the product that a test needs to misbehave or to
//! watch: a fake bridge ([`fake_bridge`]), the kit's fake master (`lobby_testkit::fake_master`),
//! a TCP proxy to cut ([`proxy`]), recording WebSocket viewers
//! ([`watchers`]), a webhook receiver ([`receiver`]) and a push service
//! that a real Firefox ([`firefox`]) subscribes at ([`push_service`]).
//! Accessibility checks run axe-core in the page ([`axe`]).
//!
//! Every wait is a bounded poll of a real signal (a ready line on stdout,
//! chromedriver's `/status`, the page's DOM), never a fixed sleep.

pub mod axe;
pub mod browser;
pub mod fake_bridge;
pub mod firefox;
pub mod game;
pub mod master;
pub mod pages;
pub mod receiver;
pub mod watchers;

/// The product's launcher, the kit's waits and its push service, shared
/// with every crate's tests (`lobby-testkit`).
pub use lobby_testkit::{
    bounded, metrics, paths, process, product, proxy, push_service, timed, until, until_blocking,
    HUNG, POLL,
};

use std::{future::Future, time::Duration};

use tokio::{
    sync::{Mutex, MutexGuard},
    time::Instant,
};

static SERIAL: Mutex<()> = Mutex::const_new(());

/// Runs browser tests one at a time within one test binary under
/// `cargo test`, whatever `--test-threads` says: each starts Chromium and
/// real processes, and a dozen at once on two cores would only wait on one
/// another. Hold the guard for the whole test. `make test` runs the tests
/// under nextest, a process per test, where the `e2e` test group of
/// `.config/nextest.toml` bounds how many run at once instead.
pub async fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().await
}

/// Polls `probe` for `period` and panics as soon as it returns `Err`: for
/// "this stays true" checks (a server that must stay listed) only where
/// the product gives no signal that the thing would have happened by now.
/// Where it does (a later message on the same socket, a counter of
/// attempts), wait for that with [`until`] and check once instead: a
/// window judges speed.
pub async fn holds_for<F, Fut>(what: &str, period: Duration, mut probe: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let start = Instant::now();
    while start.elapsed() < period {
        if let Err(seen) = probe().await {
            panic!("{what} stopped holding after {:?}: {seen}", start.elapsed());
        }
        tokio::time::sleep(POLL).await;
    }
}
