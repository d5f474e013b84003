//! What players keep on the list page end to end (docs/using.md): favourites
//! pinned across reloads and greyed while offline, hidden servers, the
//! filters' note with its one-click clear, remembered filters, the page in
//! German, the embed without tabs. Real bridge, headless Chromium, game
//! servers over raw TCP. Screenshots go to `target/e2e-screenshots/`.

use e2e::{
    browser::{count_expr, Driver},
    game::{GameServer, Stats},
    pages::{list::row, ListPage},
    process::free_port,
    product::Product,
};
use serde_json::json;

/// The three servers of [`register_three`] by name.
const THREE: [&str; 3] = ["Alpha", "Bravo", "Charlie"];

fn stats(current: u32, max: u8, open: bool) -> Stats {
    Stats {
        current,
        max,
        open,
        mode: 1,
    }
}

fn register(product: &Product, name: &str, port: u16, s: Stats) -> GameServer {
    GameServer::register(product.master, name, "192.0.2.7", port, s)
}

/// Alpha (1/4), Bravo (full), Charlie (empty), all open.
fn register_three(product: &Product) -> Vec<GameServer> {
    vec![
        register(product, "Alpha", 21001, stats(1, 4, true)),
        register(product, "Bravo", 21002, stats(4, 4, true)),
        register(product, "Charlie", 21003, stats(0, 4, true)),
    ]
}

/// A starred Charlie is pinned first in every sort, both directions, and
/// after a reload; filters never hide it (it stays, marked as not
/// matching).
async fn a_favourite_is_pinned(page: &ListPage<'_>) {
    page.star("Charlie").await;
    page.wait_rows(&["Charlie", "Alpha", "Bravo"]).await;
    page.sort_by("name").await;
    page.wait_rows(&["Charlie", "Bravo", "Alpha"]).await;
    page.sort_by("players").await;
    page.wait_rows(&["Charlie", "Bravo", "Alpha"]).await;

    page.reload_live().await;
    page.wait_rows(&["Charlie", "Bravo", "Alpha"]).await;
    assert_eq!(
        page.attr(&row("Charlie"), "data-favourite")
            .await
            .as_deref(),
        Some("true")
    );
    page.click("#filter-hide-empty").await;
    page.wait_rows(&["Charlie", "Bravo", "Alpha"]).await;
    page.wait_text(&row("Charlie"), "not matching the filters")
        .await;
    page.click("#filter-hide-empty").await;
}

/// While the socket is down the list stays as it was, marked stale:
/// nobody went offline, so Charlie is a plain favourite row.
async fn a_stale_list_shows_no_favourite_offline(page: &ListPage<'_>, product: &mut Product) {
    product.kill_bridge();
    page.wait_text("[data-testid=stale]", "last list received")
        .await;
    assert_eq!(page.rows().await, ["Charlie", "Bravo", "Alpha"]);
    assert!(page.text("[data-testid=updated]").await.is_some());
    assert!(
        page.text("[data-testid=offline-favourite]").await.is_none(),
        "a stale list shows no favourite offline"
    );
    product.restart_bridge();
    page.wait_live().await;
    page.wait_rows(&["Charlie", "Bravo", "Alpha"]).await;
}

#[tokio::test]
async fn a_favourite_is_pinned_after_a_reload_and_stays_greyed_while_offline() {
    let _serial = e2e::serial().await;
    let mut product = Product::start_with_separate_master();
    let mut servers = register_three(&product);
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::open(&browser, &product.url("/")).await;
    page.wait_rows(&THREE).await;

    a_favourite_is_pinned(&page).await;
    a_stale_list_shows_no_favourite_offline(&page, &mut product).await;

    // Charlie disconnects: it stays greyed, "offline — last seen …".
    servers.retain(|s| s.name != "Charlie");
    page.wait_listed("Charlie", false).await;
    let note = page
        .wait_text(
            "[data-testid=offline-favourite][data-name=Charlie]",
            "offline — last seen",
        )
        .await;
    assert!(note.contains("ago") || note.contains("just now"), "{note}");
    page.screenshot("players-offline-favourite").await;
    page.reload_live().await;
    page.wait_text("[data-testid=offline-favourite]", "Charlie")
        .await;

    // It comes back under another name on the same address and port: the
    // same favourite, pinned again, no offline row.
    let _back = register(&product, "Charlie reborn", 21003, stats(2, 4, true));
    page.wait_rows(&["Charlie reborn", "Bravo", "Alpha"]).await;
    assert!(page.text("[data-testid=offline-favourite]").await.is_none());

    // Unstarring puts it back in order (most players first: 4, 2, 1).
    page.star("Charlie reborn").await;
    page.wait_rows(&["Bravo", "Charlie reborn", "Alpha"]).await;
    browser.close().await;
}

/// Hide Bravo: gone, "1 hidden · show" brings it back greyed, unhiding
/// clears the note; a hidden Alpha stays hidden after a reload.
async fn hiding_servers(page: &ListPage<'_>) {
    page.click_in_row("Bravo", "[data-testid=hide]").await;
    page.wait_rows(&["Alpha", "Charlie"]).await;
    page.wait_text("[data-testid=hidden]", "1 hidden").await;
    page.click("#toggle-hidden").await;
    page.wait_rows(&THREE).await;
    page.click_in_row("Bravo", "[data-testid=unhide]").await;
    page.wait_gone("[data-testid=hidden]").await;
    // Still there after a reload: nothing hidden any more.
    page.click_in_row("Alpha", "[data-testid=hide]").await;
    page.wait_rows(&["Bravo", "Charlie"]).await;
    page.reload_live().await;
    page.wait_rows(&["Bravo", "Charlie"]).await;
    page.click("#toggle-hidden").await;
    page.click_in_row("Alpha", "[data-testid=unhide]").await;
    page.wait_rows(&THREE).await;
}

/// Filters hide two servers; the summary says so, the filters are
/// remembered for a bare `/`, and the summary's clear forgets them.
async fn the_filters_note_and_its_clear(page: &ListPage<'_>, product: &Product) {
    page.click("#filter-hide-full").await;
    page.click("#filter-hide-empty").await;
    page.wait_rows(&["Alpha"]).await;
    page.wait_text("[data-testid=filtered]", "filters hide 2")
        .await;
    page.screenshot("players-filters-note").await;

    page.open_live(&product.url("/")).await;
    page.wait_rows(&["Alpha"]).await;
    assert_eq!(page.search().await, "?hidefull=1&hideempty=1");
    page.click("#summary-clear").await;
    page.wait_rows(&THREE).await;
    assert_eq!(page.search().await, "");
    assert!(page.text("[data-testid=filtered]").await.is_none());
    page.open_live(&product.url("/")).await;
    page.wait_rows(&THREE).await;
}

#[tokio::test]
async fn hidden_servers_and_the_filters_note_clear_with_one_click() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let _servers = register_three(&product);
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::open(&browser, &product.url("/")).await;
    page.wait_rows(&THREE).await;

    hiding_servers(&page).await;
    the_filters_note_and_its_clear(&page, &product).await;

    // Corrupt values in localStorage are ignored and rewritten.
    page.js("localStorage.setItem('lobby.favourites', '{broken'); \
             localStorage.setItem('lobby.hidden', '[1,2'); \
             localStorage.setItem('lobby.filters', '%%%=&&'); \
             localStorage.setItem('lobby.lang', 'klingon'); return null;")
        .await;
    page.reload_live().await;
    page.wait_rows(&THREE).await;
    let stored = page
        .js("return [localStorage.getItem('lobby.favourites'), localStorage.getItem('lobby.hidden')];")
        .await;
    assert_eq!(stored, json!(["lobby-favourites-1", "lobby-hidden-1"]));
    browser.close().await;
}

/// Screenshots `{name}` at desktop width and `{name}-phone` at 390 px, then
/// back to desktop width.
async fn screenshots(page: &ListPage<'_>, name: &str) {
    page.screenshot(name).await;
    page.resize(390, 844).await;
    page.screenshot(&format!("{name}-phone")).await;
    page.resize(1280, 800).await;
}

#[tokio::test]
async fn the_page_speaks_german_to_a_german_browser_and_switches() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let _servers = register_three(&product);
    let driver = Driver::start();
    let browser = driver
        .browser_with(&["--lang=de", "--accept-lang=de"])
        .await;
    let page = ListPage::new(&browser);
    page.goto(&product.url("/")).await;
    page.wait_rows(&THREE).await;
    page.wait_summary("3 Server · 5 Spieler · 3 offen").await;
    assert_eq!(page.attr("html", "lang").await.as_deref(), Some("de"));
    let label = page.text("label:has(#filter-favourites)").await;
    assert_eq!(label.as_deref(), Some("Nur Favoriten"));
    screenshots(&page, "players-de").await;

    // Switched to English, kept across a reload.
    page.js(
        "const s = document.getElementById('lang'); s.value = 'en'; \
         s.dispatchEvent(new Event('change', {bubbles: true})); return null;",
    )
    .await;
    page.wait_summary("3 servers · 5 players · 3 open").await;
    page.reload_live().await;
    page.wait_summary("3 servers · 5 players · 3 open").await;
    assert_eq!(page.attr("html", "lang").await.as_deref(), Some("en"));
    screenshots(&page, "players-en").await;
    browser.close().await;
}

#[tokio::test]
async fn the_embed_hides_the_source_tabs_with_tabs_0() {
    let _serial = e2e::serial().await;
    // A source that never answers still gets a tab.
    let silent = format!("127.0.0.1:{}", free_port());
    let product = Product::start_with(&["--a2s", &silent, "--game-poll-interval", "1s"]);
    let mut servers = register_three(&product);
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::open(&browser, &product.url("/embed")).await;
    let tabs = count_expr("[data-testid=source-tab]");
    page.wait_eq("the source tabs", &tabs, json!(2)).await;

    page.open_live(&product.url("/embed?tabs=0&theme=light"))
        .await;
    page.wait_rows(&THREE).await;
    // The games come right after the list (the bridge has them: the tabs
    // above showed them); a change of the list after that shows once the
    // page has dealt with them, and no tab showed up.
    servers[2].update(stats(1, 4, true));
    page.wait_text(&row("Charlie"), "1/4").await;
    assert_eq!(page.eval(&tabs).await, json!(0));
    page.screenshot("players-embed-tabs0").await;

    // fav=1: only the favourites of this browser (starred on `/`).
    page.open_live(&product.url("/")).await;
    page.wait_listed("Bravo", true).await;
    page.star("Bravo").await;
    page.wait_rows(&["Bravo", "Alpha", "Charlie"]).await;
    page.open_live(&product.url("/embed?tabs=0&fav=1")).await;
    page.wait_rows(&["Bravo"]).await;
    browser.close().await;
}
