//! What the component tests share.

use std::time::Duration;

/// How long a wait goes on before it fails the test: only a hung test
/// reaches it. Chromium's first start on a fresh machine, beside a
/// compiler, takes seconds; a slow machine is slow, not red.
const HUNG: f64 = 60_000.0;

/// Polls `check` every 10 ms until it holds (renders are asynchronous);
/// panics naming `what` once [`HUNG`] has passed on the clock, not after a
/// count of polls, which a busy machine stretches.
pub async fn until(what: &str, mut check: impl FnMut() -> bool) {
    let start = js_sys::Date::now();
    while !check() {
        if js_sys::Date::now() - start > HUNG {
            panic!("timed out waiting for {what}");
        }
        gloo_timers::future::sleep(Duration::from_millis(10)).await;
    }
}
