//! The whole product end to end: the real `bridge` (with its embedded
//! master, or beside a `master` process), the front end as Trunk built it,
//! headless Chromium over WebDriver, and game servers over raw TCP.
//!
//! Each test starts its own processes on free ports and holds
//! [`e2e::serial`], so the browsers run one at a time. Screenshots go to
//! `target/e2e-screenshots/`.

use std::time::{Duration, Instant};

use e2e::{
    browser::Driver,
    game::{open_feuerland, GameServer, Stats},
    holds_for,
    pages::{list::row, AdminPage, ListPage},
    paths,
    process::{http_get, HttpResponse},
    product::{Product, ADMIN_TOKEN},
    until,
};
use serde_json::Value;

/// The bound for live changes (no reload).
const LIVE: Duration = Duration::from_secs(3);
/// [`register_five`] by name, A→Z (case-insensitive; CJK after Latin).
const FIVE_BY_NAME: [&str; 5] = [
    "Alpha",
    "Bravo",
    "Charlie",
    "Server von Bösewicht",
    "轰炸机人",
];

fn stats(current: u32, max: u8, open: bool, mode: u8) -> Stats {
    Stats {
        current,
        max,
        open,
        mode,
    }
}

/// Five servers that differ in every sortable column, two with non-Latin
/// names.
fn register_five(product: &Product) -> Vec<GameServer> {
    [
        ("Alpha", "192.0.2.1", 20001, stats(1, 4, true, 1)),
        ("Bravo", "192.0.2.2", 20002, stats(4, 4, true, 2)),
        ("Charlie", "fd40:9dc7:b528::1", 20003, stats(0, 2, false, 1)),
        ("轰炸机人", "game.example.org", 20004, stats(3, 4, true, 2)),
        (
            "Server von Bösewicht",
            "192.0.2.5",
            20005,
            stats(2, 3, false, 2),
        ),
    ]
    .into_iter()
    .map(|(name, address, port, stats)| {
        GameServer::register(product.master, name, address, port, stats)
    })
    .collect()
}

/// The page at `path` and the `.wasm` it names, fetched: both answered,
/// the module as `application/wasm`.
fn bundle(product: &Product, path: &str) -> (HttpResponse, String, HttpResponse) {
    let page = http_get(product.http, path).expect("GET a page");
    assert_eq!(page.status, 200, "{path}: {page:?}");
    let wasm = page
        .body
        .split(['"', '\''])
        .find(|s| s.ends_with(".wasm"))
        .unwrap_or_else(|| panic!("{path} names no .wasm: {}", page.body))
        .to_owned();
    let wasm = if wasm.starts_with('/') {
        wasm
    } else {
        format!("/{wasm}")
    };
    let module = http_get(product.http, &wasm).expect("GET the wasm");
    assert_eq!(module.status, 200, "{wasm}");
    assert!(module.head_contains("application/wasm"), "{}", module.head);
    (page, wasm, module)
}

#[tokio::test]
async fn bridge_serves_the_trunk_build() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let (index, wasm, module) = bundle(&product, "/");
    // The app's other pages are the player's app too, each with its own
    // facts in its head (a key never seen, and a path that is no page:
    // 404, the app saying so).
    for (route, status) in [
        ("/embed?theme=dark", 200),
        ("/server/0123456789abcdef", 404),
        ("/no/such/page", 404),
    ] {
        let page = http_get(product.http, route).expect("GET a route");
        assert_eq!(page.status, status, "{route}");
        // Everything after the facts is the page as built.
        let built = |body: &str| {
            body.split_once("<meta name=\"theme-color\"")
                .map(|(_, rest)| rest.to_owned())
        };
        assert!(built(&page.body).is_some(), "{route}: {}", page.body);
        assert_eq!(
            built(&page.body),
            built(&index.body),
            "{route} is not the app"
        );
    }
    // /admin is the admin's bundle, a module of its own; the player's
    // carries none of the admin's webhooks (their API's path).
    let (admin, admin_wasm, admin_module) = bundle(&product, "/admin");
    assert_ne!(admin.body, index.body, "/admin is the player's page");
    assert!(admin_wasm.starts_with("/admin/"), "{admin_wasm}");
    assert_ne!(admin_wasm, wasm);
    assert!(admin_module.body.contains("/api/admin/webhooks"));
    assert!(!module.body.contains("/api/admin/webhooks"), "{wasm}");
    assert!(paths::dist_dir().join("index.html").is_file());
    assert!(paths::dist_dir().join("admin/index.html").is_file());
}

/// The player's page carries no admin page: its link to /admin has the
/// browser load the admin's bundle.
#[tokio::test]
async fn the_players_link_to_admin_loads_the_admins_bundle() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let list = ListPage::open(&browser, &product.url("/")).await;
    assert!(
        list.wasm_loaded()
            .await
            .iter()
            .all(|w| !w.contains("/admin/")),
        "the player's page loaded the admin's bundle"
    );
    list.mark_document().await;
    list.click("nav a[href='/admin']").await;
    let admin = AdminPage::new(&browser);
    admin.find("#admin-token").await;
    assert!(!admin.same_document().await, "/admin was drawn in place");
    let loaded = admin.wasm_loaded().await;
    assert!(
        loaded.iter().any(|w| w.contains("/admin/admin-")),
        "{loaded:?}"
    );
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    browser.close().await;
}

#[tokio::test]
async fn game_server_appears_and_disappears_live() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::open(&browser, &product.url("/")).await;
    page.wait_empty().await;
    page.mark_document().await;

    let registered = Instant::now();
    let server = open_feuerland(product.master);
    page.wait_rows(&["Feuerland"]).await;
    let appeared = registered.elapsed();
    // The registration and the stats are two messages: the master may
    // list the server before it has read the stats, and the page may get
    // that list first. Wait for the row to show all of them.
    let parts = ["2/4", "Open", "Standard A+B", "192.168.0.10:20000"];
    until("the row to show the reported stats", || async {
        let text = page.text(&row("Feuerland")).await.unwrap_or_default();
        match parts.iter().find(|p| !text.contains(*p)) {
            None => Ok(()),
            Some(part) => Err(format!("{part:?} missing in {text:?}")),
        }
    })
    .await;
    page.wait_summary("1 server · 2 players · 1 open").await;
    let metrics = page.js("return window.__lobbyMetrics;").await;
    assert_eq!(metrics["lastListSize"], Value::from(1), "{metrics}");
    assert!(metrics["firstFullRenderMs"].is_number(), "{metrics}");

    let disconnected = Instant::now();
    drop(server);
    page.wait_listed("Feuerland", false).await;
    let disappeared = disconnected.elapsed();
    page.wait_empty().await;
    assert!(page.same_document().await, "the page reloaded");
    assert_eq!(page.status().await, "Live");
    eprintln!("appeared after {appeared:?}, disappeared after {disappeared:?}");
    browser.close().await;
}

/// Players, most first, then filters narrowing it down step by step; the
/// headers' aria-sort and the URL follow. Returns the URL's query.
async fn sort_by_players_and_filter(page: &ListPage<'_>) -> String {
    page.sort_by("players").await;
    let by_players = [
        "Bravo",
        "轰炸机人",
        "Server von Bösewicht",
        "Alpha",
        "Charlie",
    ];
    page.wait_rows(&by_players).await;
    assert_eq!(
        page.aria_sort("players").await.as_deref(),
        Some("descending")
    );
    assert_eq!(page.aria_sort("name").await.as_deref(), Some("none"));
    assert_eq!(page.search().await, "?sort=players");

    page.click("#filter-open").await;
    page.wait_rows(&["Bravo", "轰炸机人", "Alpha"]).await;
    page.click("#filter-hide-full").await;
    page.wait_rows(&["轰炸机人", "Alpha"]).await;
    page.find("#filter-mode")
        .await
        .select_by_value("2")
        .await
        .expect("select mode 2");
    page.wait_rows(&["轰炸机人"]).await;
    let search = page.search().await;
    for key in ["sort=players", "open=1", "hidefull=1", "mode=2"] {
        assert!(search.contains(key), "{key} missing in {search}");
    }
    search
}

/// A reload (the same URL) reproduces the view of
/// [`sort_by_players_and_filter`].
async fn a_reload_keeps_the_view(page: &ListPage<'_>, search: &str) {
    page.reload_live().await;
    page.wait_rows(&["轰炸机人"]).await;
    assert_eq!(page.search().await, search);
    assert_eq!(page.checked("#filter-open").await, Some(true));
    assert_eq!(page.checked("#filter-hide-full").await, Some(true));
    assert_eq!(page.checked("#filter-hide-empty").await, Some(false));
    assert_eq!(page.prop("#filter-mode", "value").await, Value::from("2"));
    assert_eq!(
        page.aria_sort("players").await.as_deref(),
        Some("descending")
    );
}

/// Search: case-insensitive, any script, and in the URL too.
async fn search_in_any_script(page: &ListPage<'_>, product: &Product) {
    // A bare `/` brings back the last filters (see tests/players.rs):
    // forget them to start from the whole list.
    page.js("localStorage.removeItem('lobby.filters'); return null;")
        .await;
    page.open_live(&product.url("/")).await;
    page.wait_rows(&FIVE_BY_NAME).await;
    page.type_into("#search", "BÖSEWICHT").await;
    page.wait_rows(&["Server von Bösewicht"]).await;
    page.type_into("#search", "炸机").await;
    page.wait_rows(&["轰炸机人"]).await;
    let search = page.search().await;
    assert!(search.contains("q="), "{search}");
    page.reload_live().await;
    page.wait_rows(&["轰炸机人"]).await;
    assert_eq!(page.prop("#search", "value").await, Value::from("炸机"));
}

#[tokio::test]
async fn sort_and_filters_live_in_the_url_and_survive_a_reload() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let _servers = register_five(&product);
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::open(&browser, &product.url("/")).await;
    // Default: by name, A→Z.
    page.wait_rows(&FIVE_BY_NAME).await;
    page.wait_summary("5 servers · 10 players · 3 open").await;
    page.screenshot("list").await;

    let search = sort_by_players_and_filter(&page).await;
    a_reload_keeps_the_view(&page, &search).await;
    search_in_any_script(&page, &product).await;

    // A link opens the view it describes.
    page.open_live(&product.url("/?sort=free&hideempty=1"))
        .await;
    // Free slots, most first; ties by name: Charlie (empty) is hidden.
    page.wait_rows(&["Alpha", "Server von Bösewicht", "轰炸机人", "Bravo"])
        .await;
    assert_eq!(page.aria_sort("free").await.as_deref(), Some("descending"));
    assert_eq!(page.checked("#filter-hide-empty").await, Some(true));
    browser.close().await;
}

/// Adds "Nordlicht Test" and the ten samples on the admin page, and waits
/// for the viewer to list all twelve servers.
async fn add_test_servers(admin: &AdminPage<'_>, viewer: &ListPage<'_>, product: &Product) {
    admin.add_test_server("Nordlicht Test").await;
    admin.wait_card("Nordlicht Test", "registered").await;

    viewer.open_live(&product.url("/")).await;
    viewer.wait_listed("Nordlicht Test", true).await;
    viewer.mark_document().await;

    // Ten demo servers with names in several scripts, for the screenshots.
    admin.add_samples().await;
    admin.wait_cards(11, "registered").await;
    viewer.wait_listed("轰炸机人", true).await;
    viewer.wait_listed("Λαβύρινθος", true).await;
    // Cards say "registered" when the master has them; the viewer's list
    // follows with the next push, which may still be on its way.
    viewer.wait_row_count(12).await;
}

/// Moving to the list inside the app keeps the test servers registered:
/// their sockets belong to the tab, not to the admin page. And back: the
/// cards still show them registered.
async fn in_app_navigation_keeps_them(admin: &AdminPage<'_>, viewer: &ListPage<'_>) {
    admin.mark_document().await;
    admin.click("nav a[href='/']").await;
    ListPage::new(admin)
        .wait_listed("Nordlicht Test", true)
        .await;
    assert!(admin.same_document().await, "in-app navigation reloaded");
    holds_for("Nordlicht Test listed for the viewer", LIVE, || {
        viewer.rows_are(12)
    })
    .await;
    admin.click("nav a[href='/admin']").await;
    admin.wait_card("Nordlicht Test", "registered").await;
}

#[tokio::test]
async fn admin_test_server_is_seen_by_another_browser_until_the_admin_closes() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let _feuerland = open_feuerland(product.master);
    let driver = Driver::start();
    let (admin_browser, viewer_browser) = (driver.browser().await, driver.browser().await);
    let admin = AdminPage::open(&admin_browser, &product.url("/admin")).await;
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    let viewer = ListPage::new(&viewer_browser);

    add_test_servers(&admin, &viewer, &product).await;
    admin
        .js("document.getElementById('ts-title').scrollIntoView(); return null;")
        .await;
    admin.screenshot("admin").await;
    viewer.screenshot("list-with-test-servers").await;

    in_app_navigation_keeps_them(&admin, &viewer).await;

    // The card's controls reach the other browser: one player more, and
    // removing a sample server unlists it.
    admin
        .click_on_card("Nordlicht Test", "button[aria-label='One player more']")
        .await;
    viewer.wait_text(&row("Nordlicht Test"), "1/4").await;
    admin.click_on_card("Oasis ☀", "button.remove").await;
    viewer.wait_listed("Oasis ☀", false).await;
    assert_eq!(viewer.rows().await.len(), 11);

    // A reload of the admin tab registers its servers again by itself,
    // with their stats.
    admin.client.refresh().await.expect("reload");
    admin.wait_card("Nordlicht Test", "registered").await;
    viewer.wait_text(&row("Nordlicht Test"), "1/4").await;
    until("all 11 servers back", || viewer.rows_are(11)).await;

    // Closing the admin's browser unlists its servers for everybody else.
    let closed = Instant::now();
    admin_browser.close().await;
    viewer.wait_rows(&["Feuerland"]).await;
    eprintln!(
        "test servers gone {:?} after the admin closed",
        closed.elapsed()
    );
    assert!(viewer.same_document().await, "the viewer reloaded");
    viewer_browser.close().await;
}

#[tokio::test]
async fn wrong_token_is_refused() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let admin = AdminPage::open(&browser, &product.url("/admin")).await;
    admin.sign_in("not-the-token", "rejected").await;
    assert_eq!(
        admin.prop("#add-server", "disabled").await,
        Value::Bool(true)
    );
    assert_eq!(
        admin.prop("#add-samples", "disabled").await,
        Value::Bool(true)
    );
    // The right one still works afterwards.
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    assert_eq!(
        admin.prop("#add-server", "disabled").await,
        Value::Bool(false)
    );
    browser.close().await;
}

#[tokio::test]
async fn admin_form_shows_the_protocol_message_for_the_master_port() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let admin = AdminPage::open(&browser, &product.url("/admin")).await;
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    admin
        .fill_server("Feuerland", "192.168.0.10", "51963")
        .await;
    admin
        .wait_text(
            "[data-testid=error-serverPort]",
            "port 51963 is reserved for the master server",
        )
        .await;
    assert_eq!(
        admin.attr("#new-port", "aria-invalid").await.as_deref(),
        Some("true")
    );
    admin.screenshot("admin-validation").await;
    // Submitting it adds nothing.
    admin.click("#add-server").await;
    assert_eq!(admin.text("[data-testid=test-server]").await, None);
    admin.type_into("#new-port", "20000").await;
    admin.wait_gone("[data-testid=error-serverPort]").await;
    browser.close().await;
}

#[tokio::test]
async fn page_recovers_by_itself_after_the_bridge_restarts() {
    let _serial = e2e::serial().await;
    let mut product = Product::start_with_separate_master();
    let _a = GameServer::register(
        product.master,
        "Alpha",
        "192.0.2.1",
        20001,
        stats(1, 4, true, 1),
    );
    let _b = GameServer::register(
        product.master,
        "轰炸机人",
        "192.0.2.2",
        20002,
        stats(3, 4, true, 2),
    );
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::open(&browser, &product.url("/")).await;
    page.wait_rows(&["Alpha", "轰炸机人"]).await;
    page.mark_document().await;

    let old_pid = product.bridge_pid();
    product.kill_bridge();
    let status = page.wait_reconnecting().await;
    eprintln!("while the bridge is down the pill says {status:?}");
    // The last list stays on screen, marked as stale.
    assert_eq!(page.rows().await, ["Alpha", "轰炸机人"]);
    page.wait_text("[data-testid=stale]", "connection to the lobby was lost")
        .await;

    let restarted = Instant::now();
    product.restart_bridge();
    assert_ne!(product.bridge_pid(), old_pid);
    page.wait_live().await;
    let recovered = restarted.elapsed();
    page.wait_rows(&["Alpha", "轰炸机人"]).await;
    assert!(page.same_document().await, "the page reloaded");
    // Pushes work again on the new connection.
    let _c = GameServer::register(
        product.master,
        "Bravo",
        "192.0.2.3",
        20003,
        stats(0, 2, true, 1),
    );
    page.wait_rows(&["Alpha", "Bravo", "轰炸机人"]).await;
    page.wait_gone("[data-testid=stale]").await;
    eprintln!("live again {recovered:?} after the bridge restarted");
    browser.close().await;
}

#[tokio::test]
async fn embed_renders_rows_in_the_dark_theme_without_navigation() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let _servers = register_five(&product);
    let driver = Driver::start();
    let browser = driver.browser().await;
    browser.resize(800, 600).await;
    let page = ListPage::open(&browser, &product.url("/embed?theme=dark&open=1")).await;
    page.wait_rows(&["Alpha", "Bravo", "轰炸机人"]).await;
    assert_eq!(
        page.attr("html", "data-theme").await.as_deref(),
        Some("dark")
    );
    let chrome = page.count("header, nav, #search, .filters").await;
    assert_eq!(chrome, 0, "the embed shows navigation chrome");
    // The dark theme really applies: a dark page background.
    let bg = page
        .js("return getComputedStyle(document.body).backgroundColor;")
        .await;
    assert_eq!(bg, Value::from("rgb(15, 18, 24)"), "not dark: {bg}");
    page.screenshot("embed-dark").await;
    browser.close().await;
}

#[tokio::test]
async fn phone_width_shows_the_list_without_sideways_scrolling() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let _servers = register_five(&product);
    let driver = Driver::start();
    let browser = driver.browser().await;
    browser.resize(390, 844).await;
    let page = ListPage::open(&browser, &product.url("/")).await;
    page.wait_rows(&FIVE_BY_NAME).await;
    let overflow = page
        .js("return document.documentElement.scrollWidth - window.innerWidth;")
        .await;
    assert!(
        overflow.as_i64().is_some_and(|px| px <= 0),
        "the page scrolls sideways by {overflow} px at 390 px"
    );
    page.screenshot("phone-390").await;
    browser.close().await;
}
