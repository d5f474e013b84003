//! What the component tests share.

use std::time::Duration;

/// Polls `check` every 10 ms until it holds (renders are asynchronous and
/// a busy machine is slow); panics after 5 s naming `what`.
pub async fn until(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        gloo_timers::future::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}
