//! The front end's polling fallback end to end: the real bridge only serves
//! the page, which is pointed (`?bridge=`) at a fake bridge in this test
//! that never pushes and answers only `msQueryGameServers`. The page must
//! wait out its grace period, then poll every 2 s, show what the polls
//! return without a reload, start over on a new socket after a drop, and
//! stop polling once a push arrives after all.
//!
//! Holds [`e2e::serial`] like the other browser tests. Screenshots go to
//! `target/e2e-screenshots/`.

use std::time::{Duration, Instant};

use e2e::{
    browser::Driver,
    fake_bridge::FakeBridge,
    holds_for,
    master::listed,
    pages::{list::row, ListPage},
    product::Product,
    until,
};
use serde_json::Value;

/// The front end's `PUSH_GRACE_MS`: no list this long after opening, so poll.
const PUSH_GRACE: Duration = Duration::from_millis(3000);
/// The front end's `POLL_EVERY_MS`.
const POLL_EVERY: Duration = Duration::from_millis(2000);
/// The earliest a first query may come after the fake accepted the socket:
/// the grace period, less a margin for clocks and the handshake.
const EARLIEST_FIRST_QUERY: Duration = Duration::from_millis(2500);
/// No two queries may come closer than this (the page must not flood).
const MIN_GAP: Duration = Duration::from_millis(1500);
/// Nor further apart than this (the page must not stall).
const MAX_GAP: Duration = Duration::from_millis(5000);

/// A server as the fake lists it.
fn server(name: &str, port: u16, current: u32) -> Value {
    listed(name, port, current)
}

/// The gaps between consecutive instants.
fn gaps(at: &[Instant]) -> Vec<Duration> {
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

/// Checks the page during connection `id`'s grace period: as long as the
/// fake has answered no query on it, the page can have no list from it and
/// must not claim to be live. Probes at least once, then until
/// [`EARLIEST_FIRST_QUERY`] after the accept. Returns how many probes found
/// no query yet (and so checked something).
async fn quiet_during_grace(
    browser: &ListPage<'_>,
    fake: &FakeBridge,
    id: usize,
    rows_before: &[&str],
) -> u32 {
    let accepted = fake.conns()[id].accepted;
    let mut checked = 0;
    loop {
        // The page first, then the fake: a reply can only follow a query,
        // so if none has come by now the page saw no list from this socket.
        let status = browser.status().await;
        let rows = browser.rows().await;
        if fake.queries(id).is_empty() {
            checked += 1;
            assert_eq!(
                status,
                "Connecting…",
                "the pill before any list on socket {id}, {:?} after the accept",
                accepted.elapsed()
            );
            assert_eq!(rows, rows_before, "rows before any list on socket {id}");
        }
        if accepted.elapsed() >= EARLIEST_FIRST_QUERY {
            return checked;
        }
        tokio::time::sleep(e2e::POLL).await;
    }
}

/// Waits for connection `id`'s first query and checks it came after the
/// grace period; returns it.
async fn first_query_after_grace(fake: &FakeBridge, id: usize) -> Instant {
    let first = until(
        &format!("the first msQueryGameServers on socket {id}"),
        || async {
            fake.queries(id)
                .first()
                .copied()
                .ok_or_else(|| format!("{:?}", fake.conns().get(id)))
        },
    )
    .await;
    let conn = &fake.conns()[id];
    let since_accept = first - conn.accepted;
    let since_open = conn.opened.map(|o| first - o);
    eprintln!(
        "socket {id}: first query {since_accept:?} after the accept ({since_open:?} after the handshake)"
    );
    assert!(
        since_accept >= EARLIEST_FIRST_QUERY,
        "socket {id} polled {since_accept:?} after the accept, before the {PUSH_GRACE:?} grace period"
    );
    first
}

/// The page subscribes on socket `id`, gets nothing back, shows no list
/// and does not poll during the grace period, then polls and says it is
/// live, polling; returns when the first query came and how many probes
/// saw the grace period.
async fn polls_after_the_grace_period(
    page: &ListPage<'_>,
    fake: &FakeBridge,
    id: usize,
    rows_before: &[&str],
) -> (Instant, u32) {
    let (socket, _) = fake.wait_subscribe(id).await;
    assert_eq!(socket, id, "one subscribe per socket");
    assert_eq!(fake.conns()[id].path, "/ws");
    let checked = quiet_during_grace(page, fake, id, rows_before).await;
    eprintln!(
        "socket {id}: {checked} probes in the grace period saw no query, no list, Connecting…"
    );
    let first = first_query_after_grace(fake, id).await;
    page.wait_status("Live (polling)").await;
    (first, checked)
}

/// The polls keep coming on socket 0, about every 2 s: neither a flood nor
/// a stop.
async fn polls_at_their_pace(fake: &FakeBridge) {
    let queries = until("five queries", || async {
        let q = fake.queries(0);
        if q.len() >= 5 {
            Ok(q)
        } else {
            Err(format!("{} queries, gaps {:?}", q.len(), gaps(&q)))
        }
    })
    .await;
    let gaps = gaps(&queries);
    eprintln!("gaps between queries: {gaps:?} (the page polls every {POLL_EVERY:?})");
    assert!(
        gaps.iter().all(|g| *g >= MIN_GAP),
        "queries closer than {MIN_GAP:?}: {gaps:?}"
    );
    assert!(
        gaps.iter().all(|g| *g <= MAX_GAP),
        "polling stalled for more than {MAX_GAP:?}: {gaps:?}"
    );
}

/// Nothing but polls was sent on `sockets` sockets: one subscribe each, no
/// other frames.
fn only_polls(fake: &FakeBridge, sockets: usize) {
    let conns = fake.conns();
    assert_eq!(conns.len(), sockets, "sockets opened: {conns:?}");
    for id in 0..sockets {
        let subscribes = fake.subscribes().iter().filter(|(s, _)| *s == id).count();
        assert_eq!(subscribes, 1, "socket {id}: {:?}", fake.frames_on(id));
        let other = fake.other(id);
        assert!(other.is_empty(), "unexpected frames: {other:?}");
    }
}

/// The fake goes away: the page says so, keeps the last list, and retries
/// on its own.
async fn a_drop_is_shown_and_retried(page: &ListPage<'_>, fake: &FakeBridge) {
    fake.set_accepting(false);
    fake.close_all();
    let status = page.wait_reconnecting().await;
    eprintln!("after the drop the pill says {status:?}");
    assert_eq!(page.rows().await, ["Alpha", "Bravo", "Charlie"]);
    page.wait_text("[data-testid=stale]", "connection to the lobby was lost")
        .await;
    until("a refused attempt", || async {
        match fake.refused() {
            0 => Err("none yet".to_owned()),
            n => Ok(n),
        }
    })
    .await;
}

/// Pushes work after all: a list nobody asked for ends polling, and the
/// page shows it.
async fn a_push_ends_polling(page: &ListPage<'_>, fake: &FakeBridge) {
    fake.set_servers(vec![server("Echo", 20005, 1)]);
    fake.push_list();
    page.wait_status("Live").await;
    page.wait_rows(&["Echo"]).await;
    // Counted from when the page shows the push, not from when it went
    // out: a slow page may still poll while the push is on its way. A
    // query already on its way when the page took the push may still
    // come; more than that over four poll intervals means polling went on.
    let live_at = Instant::now();
    holds_for("no more polling after a push", POLL_EVERY * 4, || async {
        let after: Vec<Instant> = fake
            .queries(1)
            .into_iter()
            .filter(|&t| t > live_at)
            .collect();
        if after.len() <= 1 {
            Ok(())
        } else {
            Err(format!("{} queries after the push", after.len()))
        }
    })
    .await;
    assert_eq!(page.status().await, "Live");
}

#[tokio::test]
async fn page_polls_a_bridge_that_never_pushes() {
    let _serial = e2e::serial().await;
    // The product only serves the page here; its own bridge stays unused.
    let product = Product::start();
    let fake = FakeBridge::builder()
        .answer_queries(vec![server("Alpha", 20001, 1), server("Bravo", 20002, 2)])
        .start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::new(&browser);
    page.goto(&product.url(&format!("/?bridge={}", fake.url())))
        .await;

    let (first, checked) = polls_after_the_grace_period(&page, &fake, 0, &[]).await;
    assert!(checked > 0, "the grace period was never observed");
    page.wait_rows(&["Alpha", "Bravo"]).await;
    eprintln!("live (polling) {:?} after the first query", first.elapsed());
    page.screenshot("polling-live").await;

    // A change at the fake shows up with a later poll, without a reload.
    page.mark_document().await;
    let changed = Instant::now();
    fake.set_servers(vec![
        server("Alpha", 20001, 3),
        server("Bravo", 20002, 2),
        server("Charlie", 20003, 0),
    ]);
    page.wait_rows(&["Alpha", "Bravo", "Charlie"]).await;
    eprintln!("the change was shown {:?} later", changed.elapsed());
    page.wait_text(&row("Alpha"), "3/4").await;
    assert!(page.same_document().await, "the page reloaded");
    assert_eq!(page.status().await, "Live (polling)");

    polls_at_their_pace(&fake).await;
    only_polls(&fake, 1);
    a_drop_is_shown_and_retried(&page, &fake).await;

    // Back with another list: a new socket, the grace period again (the
    // old rows stay meanwhile), then polling again.
    fake.set_servers(vec![server("Bravo", 20002, 2), server("Delta", 20004, 4)]);
    let back = Instant::now();
    fake.set_accepting(true);
    let old_rows = ["Alpha", "Bravo", "Charlie"];
    polls_after_the_grace_period(&page, &fake, 1, &old_rows).await;
    page.wait_rows(&["Bravo", "Delta"]).await;
    eprintln!(
        "live (polling) again {:?} after the fake came back ({} attempts refused)",
        back.elapsed(),
        fake.refused()
    );
    assert!(page.same_document().await, "the page reloaded");
    only_polls(&fake, 2);
    page.screenshot("polling-reconnected").await;

    a_push_ends_polling(&page, &fake).await;
    browser.close().await;
}
