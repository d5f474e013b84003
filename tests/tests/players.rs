//! What players keep on the list page end to end (docs/using.md): favourites
//! pinned across reloads and greyed while offline, hidden servers, the
//! filters' note with its one-click clear, remembered filters, the page in
//! German, the embed without tabs. Real bridge, headless Chromium, game
//! servers over raw TCP. Screenshots go to `target/e2e-screenshots/`.

use std::time::Duration;

use e2e::{
    browser::{Browser, Driver, PAGE_READY},
    game::{GameServer, Stats},
    holds_for,
    lobby::Lobby,
    process::free_port,
    wait_for,
};
use serde_json::Value;

/// The bound for live changes (no reload).
const LIVE: Duration = Duration::from_secs(3);

fn stats(current: u32, max: u8, open: bool) -> Stats {
    Stats {
        current,
        max,
        open,
        mode: 1,
    }
}

fn register(lobby: &Lobby, name: &str, port: u16, s: Stats) -> GameServer {
    GameServer::register(lobby.master, name, "192.0.2.7", port, s)
}

/// Alpha (1/4), Bravo (full), Charlie (empty), all open.
fn register_three(lobby: &Lobby) -> Vec<GameServer> {
    vec![
        register(lobby, "Alpha", 21001, stats(1, 4, true)),
        register(lobby, "Bravo", 21002, stats(4, 4, true)),
        register(lobby, "Charlie", 21003, stats(0, 4, true)),
    ]
}

fn row(name: &str) -> String {
    format!("[data-testid=server-row][data-name=\"{name}\"]")
}

async fn open_live(browser: &Browser, lobby: &Lobby, path: &str) {
    browser.goto(&lobby.url(path)).await;
    browser.wait_live(PAGE_READY).await;
}

async fn reload(browser: &Browser) {
    browser.client.refresh().await.expect("reload");
    browser.wait_live(PAGE_READY).await;
}

/// Clicks the first element matching `css` inside the row of `name`.
async fn click_in_row(browser: &Browser, name: &str, css: &str) {
    browser.click(&format!("{} {css}", row(name))).await;
}

#[tokio::test]
async fn a_favourite_is_pinned_after_a_reload_and_stays_greyed_while_offline() {
    let _serial = e2e::serial().await;
    let mut lobby = Lobby::start_with_separate_master();
    let mut servers = register_three(&lobby);
    let driver = Driver::start();
    let browser = driver.browser().await;
    open_live(&browser, &lobby, "/").await;
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], LIVE)
        .await;

    click_in_row(&browser, "Charlie", "[data-testid=star]").await;
    browser
        .wait_rows(&["Charlie", "Alpha", "Bravo"], LIVE)
        .await;
    // Pinned in every sort, both directions.
    browser.click("th[data-sort=name] button").await;
    browser
        .wait_rows(&["Charlie", "Bravo", "Alpha"], LIVE)
        .await;
    browser.click("th[data-sort=players] button").await;
    browser
        .wait_rows(&["Charlie", "Bravo", "Alpha"], LIVE)
        .await;

    reload(&browser).await;
    browser
        .wait_rows(&["Charlie", "Bravo", "Alpha"], LIVE)
        .await;
    assert_eq!(
        browser
            .attr(&row("Charlie"), "data-favourite")
            .await
            .as_deref(),
        Some("true")
    );
    // Filters never hide a favourite: it stays, marked as not matching.
    browser.click("#filter-hide-empty").await;
    browser
        .wait_rows(&["Charlie", "Bravo", "Alpha"], LIVE)
        .await;
    browser
        .wait_text(&row("Charlie"), "not matching the filters", LIVE)
        .await;
    browser.click("#filter-hide-empty").await;

    // While the socket is down the list stays as it was, marked stale:
    // nobody went offline, so Charlie is a plain favourite row.
    lobby.kill_bridge();
    browser
        .wait_text("[data-testid=stale]", "last list received", LIVE)
        .await;
    assert_eq!(browser.rows().await, ["Charlie", "Bravo", "Alpha"]);
    assert!(browser.text("[data-testid=updated]").await.is_some());
    assert!(
        browser
            .text("[data-testid=offline-favourite]")
            .await
            .is_none(),
        "a stale list shows no favourite offline"
    );
    lobby.restart_bridge();
    browser.wait_live(Duration::from_secs(20)).await;
    browser
        .wait_rows(&["Charlie", "Bravo", "Alpha"], LIVE)
        .await;

    // Charlie disconnects: it stays greyed, "offline — last seen …".
    servers.retain(|s| s.name != "Charlie");
    browser.wait_listed("Charlie", false, LIVE).await;
    let note = browser
        .wait_text(
            "[data-testid=offline-favourite][data-name=Charlie]",
            "offline — last seen",
            LIVE,
        )
        .await;
    assert!(note.contains("ago") || note.contains("just now"), "{note}");
    browser.screenshot("players-offline-favourite").await;
    reload(&browser).await;
    browser
        .wait_text("[data-testid=offline-favourite]", "Charlie", LIVE)
        .await;

    // It comes back under another name on the same address and port: the
    // same favourite, pinned again, no offline row.
    let _back = register(&lobby, "Charlie reborn", 21003, stats(2, 4, true));
    browser
        .wait_rows(&["Charlie reborn", "Bravo", "Alpha"], LIVE)
        .await;
    assert!(browser
        .text("[data-testid=offline-favourite]")
        .await
        .is_none());

    // Unstarring puts it back in order (most players first: 4, 2, 1).
    click_in_row(&browser, "Charlie reborn", "[data-testid=star]").await;
    browser
        .wait_rows(&["Bravo", "Charlie reborn", "Alpha"], LIVE)
        .await;
    browser.close().await;
}

#[tokio::test]
async fn hidden_servers_and_the_filters_note_clear_with_one_click() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let _servers = register_three(&lobby);
    let driver = Driver::start();
    let browser = driver.browser().await;
    open_live(&browser, &lobby, "/").await;
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], LIVE)
        .await;

    // Hide Bravo: gone, "1 hidden · show" brings it back greyed.
    click_in_row(&browser, "Bravo", "[data-testid=hide]").await;
    browser.wait_rows(&["Alpha", "Charlie"], LIVE).await;
    browser
        .wait_text("[data-testid=hidden]", "1 hidden", LIVE)
        .await;
    browser.click("#toggle-hidden").await;
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], LIVE)
        .await;
    click_in_row(&browser, "Bravo", "[data-testid=unhide]").await;
    wait_for("the hidden note to go", LIVE, || async {
        match browser.text("[data-testid=hidden]").await {
            None => Ok(()),
            Some(t) => Err(t),
        }
    })
    .await;
    // Still there after a reload: nothing hidden any more.
    click_in_row(&browser, "Alpha", "[data-testid=hide]").await;
    browser.wait_rows(&["Bravo", "Charlie"], LIVE).await;
    reload(&browser).await;
    browser.wait_rows(&["Bravo", "Charlie"], LIVE).await;
    browser.click("#toggle-hidden").await;
    click_in_row(&browser, "Alpha", "[data-testid=unhide]").await;
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], LIVE)
        .await;

    // Filters hide two servers; the summary says so and clears them.
    browser.click("#filter-hide-full").await;
    browser.click("#filter-hide-empty").await;
    browser.wait_rows(&["Alpha"], LIVE).await;
    browser
        .wait_text("[data-testid=filtered]", "filters hide 2", LIVE)
        .await;
    browser.screenshot("players-filters-note").await;

    // The filters are remembered: a bare `/` gets them back.
    browser.goto(&lobby.url("/")).await;
    browser.wait_live(PAGE_READY).await;
    browser.wait_rows(&["Alpha"], LIVE).await;
    assert_eq!(browser.search().await, "?hidefull=1&hideempty=1");
    browser.click("#summary-clear").await;
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], LIVE)
        .await;
    assert_eq!(browser.search().await, "");
    assert!(browser.text("[data-testid=filtered]").await.is_none());
    browser.goto(&lobby.url("/")).await;
    browser.wait_live(PAGE_READY).await;
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], LIVE)
        .await;

    // Corrupt values in localStorage are ignored and rewritten.
    browser
        .js("localStorage.setItem('lobby.favourites', '{broken'); \
             localStorage.setItem('lobby.hidden', '[1,2'); \
             localStorage.setItem('lobby.filters', '%%%=&&'); \
             localStorage.setItem('lobby.lang', 'klingon'); return null;")
        .await;
    reload(&browser).await;
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], LIVE)
        .await;
    let stored = browser
        .js("return [localStorage.getItem('lobby.favourites'), localStorage.getItem('lobby.hidden')];")
        .await;
    assert_eq!(
        stored,
        serde_json::json!(["lobby-favourites-1", "lobby-hidden-1"])
    );
    browser.close().await;
}

#[tokio::test]
async fn the_page_speaks_german_to_a_german_browser_and_switches() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let _servers = register_three(&lobby);
    let driver = Driver::start();
    let browser = driver
        .browser_with(&["--lang=de", "--accept-lang=de"])
        .await;
    browser.goto(&lobby.url("/")).await;
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], PAGE_READY)
        .await;
    browser
        .wait_text(
            "[data-testid=summary]",
            "3 Server · 5 Spieler · 3 offen",
            LIVE,
        )
        .await;
    assert_eq!(browser.attr("html", "lang").await.as_deref(), Some("de"));
    let label = browser.text("label:has(#filter-favourites)").await;
    assert_eq!(label.as_deref(), Some("Nur Favoriten"));
    browser.screenshot("players-de").await;
    browser.resize(390, 844).await;
    browser.screenshot("players-de-phone").await;
    browser.resize(1280, 800).await;

    // Switched to English, kept across a reload.
    browser
        .js(
            "const s = document.getElementById('lang'); s.value = 'en'; \
             s.dispatchEvent(new Event('change', {bubbles: true})); return null;",
        )
        .await;
    browser
        .wait_text(
            "[data-testid=summary]",
            "3 servers · 5 players · 3 open",
            LIVE,
        )
        .await;
    reload(&browser).await;
    browser
        .wait_text(
            "[data-testid=summary]",
            "3 servers · 5 players · 3 open",
            LIVE,
        )
        .await;
    assert_eq!(browser.attr("html", "lang").await.as_deref(), Some("en"));
    browser.screenshot("players-en").await;
    browser.resize(390, 844).await;
    browser.screenshot("players-en-phone").await;
    browser.close().await;
}

#[tokio::test]
async fn the_embed_hides_the_source_tabs_with_tabs_0() {
    let _serial = e2e::serial().await;
    // A source that never answers still gets a tab.
    let silent = format!("127.0.0.1:{}", free_port());
    let lobby = Lobby::start_with(&["--a2s", &silent, "--game-poll-interval", "1s"]);
    let _servers = register_three(&lobby);
    let driver = Driver::start();
    let browser = driver.browser().await;
    open_live(&browser, &lobby, "/embed").await;
    let tabs = "return document.querySelectorAll('[data-testid=source-tab]').length;";
    wait_for("the source tabs", PAGE_READY, || async {
        match browser.js(tabs).await {
            Value::Number(n) if n.as_u64() == Some(2) => Ok(()),
            other => Err(other.to_string()),
        }
    })
    .await;

    open_live(&browser, &lobby, "/embed?tabs=0&theme=light").await;
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], LIVE)
        .await;
    // The games arrive after the list: no tab shows up meanwhile.
    holds_for("no source tabs", Duration::from_secs(2), || async {
        match browser.js(tabs).await {
            Value::Number(n) if n.as_u64() == Some(0) => Ok(()),
            other => Err(other.to_string()),
        }
    })
    .await;
    browser.screenshot("players-embed-tabs0").await;

    // fav=1: only the favourites of this browser (starred on `/`).
    open_live(&browser, &lobby, "/").await;
    browser.wait_listed("Bravo", true, LIVE).await;
    click_in_row(&browser, "Bravo", "[data-testid=star]").await;
    browser
        .wait_rows(&["Bravo", "Alpha", "Charlie"], LIVE)
        .await;
    open_live(&browser, &lobby, "/embed?tabs=0&fav=1").await;
    browser.wait_rows(&["Bravo"], LIVE).await;
    browser.close().await;
}
