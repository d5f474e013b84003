//! The whole product end to end: the real `bridge` (with its embedded
//! master, or beside a `master` process), the front end as Trunk built it,
//! headless Chromium over WebDriver, and game servers over raw TCP.
//!
//! Each test starts its own processes on free ports and holds
//! [`e2e::serial`], so the browsers run one at a time. Screenshots go to
//! `target/e2e-screenshots/`.

use std::time::{Duration, Instant};

use e2e::{
    browser::{Browser, Driver, PAGE_READY},
    game::{GameServer, Stats},
    holds_for,
    lobby::{Lobby, ADMIN_TOKEN},
    paths,
    process::http_get,
    wait_for,
};
use serde_json::Value;

/// The bound for live changes (no reload).
const LIVE: Duration = Duration::from_secs(3);
/// The bridge's first reconnect attempts after a restart take 0.5-2 s each.
const RECOVERY: Duration = Duration::from_secs(20);

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
fn register_five(lobby: &Lobby) -> Vec<GameServer> {
    vec![
        GameServer::register(
            lobby.master,
            "Alpha",
            "192.0.2.1",
            20001,
            stats(1, 4, true, 1),
        ),
        GameServer::register(
            lobby.master,
            "Bravo",
            "192.0.2.2",
            20002,
            stats(4, 4, true, 2),
        ),
        GameServer::register(
            lobby.master,
            "Charlie",
            "fd40:9dc7:b528::1",
            20003,
            stats(0, 2, false, 1),
        ),
        GameServer::register(
            lobby.master,
            "轰炸机人",
            "game.example.org",
            20004,
            stats(3, 4, true, 2),
        ),
        GameServer::register(
            lobby.master,
            "Server von Bösewicht",
            "192.0.2.5",
            20005,
            stats(2, 3, false, 2),
        ),
    ]
}

/// Opens `path` and waits until the page is live.
async fn open_live(browser: &Browser, lobby: &Lobby, path: &str) {
    browser.goto(&lobby.url(path)).await;
    browser.wait_live(PAGE_READY).await;
}

/// Signs the admin page in with `token` and waits for the verdict.
async fn sign_in(browser: &Browser, token: &str, verdict: &str) {
    browser.type_into("#admin-token", token).await;
    browser.click("#admin-login").await;
    browser
        .wait_text("[data-testid=auth-result]", verdict, PAGE_READY)
        .await;
}

/// Whether `page` shows `n` rows (the rows seen, if not).
async fn rows_are(page: &Browser, n: usize) -> Result<(), String> {
    let rows = page.rows().await;
    if rows.len() == n {
        Ok(())
    } else {
        Err(format!("{rows:?}"))
    }
}

/// The admin page's card of test server `name`.
fn test_server(name: &str) -> String {
    format!("[data-testid=test-server][data-name=\"{name}\"]")
}

fn test_server_status(name: &str) -> String {
    format!("{} [data-testid=test-server-status]", test_server(name))
}

/// The list's row of server `name`.
fn row(name: &str) -> String {
    format!("[data-testid=server-row][data-name=\"{name}\"]")
}

#[tokio::test]
async fn bridge_serves_the_trunk_build() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let index = http_get(lobby.http, "/").expect("GET /");
    assert_eq!(index.status, 200, "{index:?}");
    let wasm = index
        .body
        .split('"')
        .find(|s| s.ends_with(".wasm"))
        .unwrap_or_else(|| panic!("index.html names no .wasm: {}", index.body))
        .to_owned();
    let wasm_path = if wasm.starts_with('/') {
        wasm
    } else {
        format!("/{wasm}")
    };
    let module = http_get(lobby.http, &wasm_path).expect("GET the wasm");
    assert_eq!(module.status, 200, "{wasm_path}");
    assert!(
        module
            .head
            .to_ascii_lowercase()
            .contains("application/wasm"),
        "{}",
        module.head
    );
    // Client-side routes fall back to the app.
    for route in ["/admin", "/embed?theme=dark"] {
        let page = http_get(lobby.http, route).expect("GET a route");
        assert_eq!(page.status, 200, "{route}");
        assert_eq!(page.body, index.body, "{route} is not the app");
    }
    assert!(paths::dist_dir().join("index.html").is_file());
}

#[tokio::test]
async fn game_server_appears_and_disappears_live() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    open_live(&browser, &lobby, "/").await;
    browser
        .wait_text("[data-testid=empty]", "No servers online", LIVE)
        .await;
    browser.mark_document().await;

    let registered = Instant::now();
    let server = GameServer::register(
        lobby.master,
        "Feuerland",
        "192.168.0.10",
        20000,
        stats(2, 4, true, 2),
    );
    browser.wait_rows(&["Feuerland"], LIVE).await;
    let appeared = registered.elapsed();
    // The registration and the stats are two messages: the master may
    // list the server before it has read the stats, and the page may get
    // that list first. Wait for the row to show all of them.
    let parts = ["2/4", "Open", "Standard A+B", "192.168.0.10:20000"];
    wait_for("the row to show the reported stats", LIVE, || async {
        let text = browser.text(&row("Feuerland")).await.unwrap_or_default();
        match parts.iter().find(|p| !text.contains(*p)) {
            None => Ok(()),
            Some(part) => Err(format!("{part:?} missing in {text:?}")),
        }
    })
    .await;
    browser
        .wait_text(
            "[data-testid=summary]",
            "1 server · 2 players · 1 open",
            LIVE,
        )
        .await;
    let metrics = browser.js("return window.__lobbyMetrics;").await;
    assert_eq!(metrics["lastListSize"], Value::from(1), "{metrics}");
    assert!(metrics["firstFullRenderMs"].is_number(), "{metrics}");

    let disconnected = Instant::now();
    drop(server);
    browser.wait_listed("Feuerland", false, LIVE).await;
    let disappeared = disconnected.elapsed();
    browser
        .wait_text("[data-testid=empty]", "No servers online", LIVE)
        .await;
    assert!(browser.same_document().await, "the page reloaded");
    assert_eq!(browser.status().await, "Live");
    eprintln!("appeared after {appeared:?}, disappeared after {disappeared:?}");
    browser.close().await;
}

#[tokio::test]
async fn sort_and_filters_live_in_the_url_and_survive_a_reload() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let _servers = register_five(&lobby);
    let driver = Driver::start();
    let browser = driver.browser().await;
    open_live(&browser, &lobby, "/").await;
    // Default: by name, A→Z (case-insensitive; CJK after Latin).
    browser
        .wait_rows(
            &[
                "Alpha",
                "Bravo",
                "Charlie",
                "Server von Bösewicht",
                "轰炸机人",
            ],
            LIVE,
        )
        .await;
    browser
        .wait_text(
            "[data-testid=summary]",
            "5 servers · 10 players · 3 open",
            LIVE,
        )
        .await;
    browser.screenshot("list").await;

    // Players, most first; aria-sort and the URL follow.
    browser.click("th[data-sort=players] button").await;
    let by_players = [
        "Bravo",
        "轰炸机人",
        "Server von Bösewicht",
        "Alpha",
        "Charlie",
    ];
    browser.wait_rows(&by_players, LIVE).await;
    assert_eq!(
        browser
            .attr("th[data-sort=players]", "aria-sort")
            .await
            .as_deref(),
        Some("descending")
    );
    assert_eq!(
        browser
            .attr("th[data-sort=name]", "aria-sort")
            .await
            .as_deref(),
        Some("none")
    );
    assert_eq!(browser.search().await, "?sort=players");

    // Filters narrow it down step by step.
    browser.click("#filter-open").await;
    browser
        .wait_rows(&["Bravo", "轰炸机人", "Alpha"], LIVE)
        .await;
    browser.click("#filter-hide-full").await;
    browser.wait_rows(&["轰炸机人", "Alpha"], LIVE).await;
    browser
        .find("#filter-mode")
        .await
        .select_by_value("2")
        .await
        .expect("select mode 2");
    browser.wait_rows(&["轰炸机人"], LIVE).await;
    let search = browser.search().await;
    for key in ["sort=players", "open=1", "hidefull=1", "mode=2"] {
        assert!(search.contains(key), "{key} missing in {search}");
    }

    // A reload (the same URL) reproduces the view.
    browser.client.refresh().await.expect("reload");
    browser.wait_live(PAGE_READY).await;
    browser.wait_rows(&["轰炸机人"], LIVE).await;
    assert_eq!(browser.search().await, search);
    assert_eq!(
        browser.prop("#filter-open", "checked").await,
        Value::Bool(true)
    );
    assert_eq!(
        browser.prop("#filter-hide-full", "checked").await,
        Value::Bool(true)
    );
    assert_eq!(
        browser.prop("#filter-hide-empty", "checked").await,
        Value::Bool(false)
    );
    assert_eq!(
        browser.prop("#filter-mode", "value").await,
        Value::from("2")
    );
    assert_eq!(
        browser
            .attr("th[data-sort=players]", "aria-sort")
            .await
            .as_deref(),
        Some("descending")
    );

    // Search: case-insensitive, any script, and in the URL too. (A bare
    // `/` brings back the last filters, see tests/players.rs: forget them
    // to start from the whole list.)
    browser
        .js("localStorage.removeItem('lobby.filters'); return null;")
        .await;
    browser.goto(&lobby.url("/")).await;
    browser.wait_live(PAGE_READY).await;
    browser
        .wait_rows(
            &[
                "Alpha",
                "Bravo",
                "Charlie",
                "Server von Bösewicht",
                "轰炸机人",
            ],
            LIVE,
        )
        .await;
    browser.type_into("#search", "BÖSEWICHT").await;
    browser.wait_rows(&["Server von Bösewicht"], LIVE).await;
    browser.type_into("#search", "炸机").await;
    browser.wait_rows(&["轰炸机人"], LIVE).await;
    let search = browser.search().await;
    assert!(search.contains("q="), "{search}");
    browser.client.refresh().await.expect("reload");
    browser.wait_live(PAGE_READY).await;
    browser.wait_rows(&["轰炸机人"], LIVE).await;
    assert_eq!(browser.prop("#search", "value").await, Value::from("炸机"));

    // A link opens the view it describes.
    browser.goto(&lobby.url("/?sort=free&hideempty=1")).await;
    browser.wait_live(PAGE_READY).await;
    // Free slots, most first; ties by name: Charlie (empty) is hidden.
    browser
        .wait_rows(
            &["Alpha", "Server von Bösewicht", "轰炸机人", "Bravo"],
            LIVE,
        )
        .await;
    assert_eq!(
        browser
            .attr("th[data-sort=free]", "aria-sort")
            .await
            .as_deref(),
        Some("descending")
    );
    assert_eq!(
        browser.prop("#filter-hide-empty", "checked").await,
        Value::Bool(true)
    );
    browser.close().await;
}

#[tokio::test]
async fn admin_test_server_is_seen_by_another_browser_until_the_admin_closes() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let _feuerland = GameServer::register(
        lobby.master,
        "Feuerland",
        "192.168.0.10",
        20000,
        stats(2, 4, true, 2),
    );
    let driver = Driver::start();
    let admin = driver.browser().await;
    let viewer = driver.browser().await;

    open_live(&admin, &lobby, "/admin").await;
    sign_in(&admin, ADMIN_TOKEN, "Signed in").await;
    admin.type_into("#new-name", "Nordlicht Test").await;
    admin.type_into("#new-address", "test.example.org").await;
    admin.type_into("#new-port", "20500").await;
    admin.click("#add-server").await;
    admin
        .wait_text(&test_server_status("Nordlicht Test"), "registered", LIVE)
        .await;

    open_live(&viewer, &lobby, "/").await;
    viewer.wait_listed("Nordlicht Test", true, LIVE).await;
    viewer.mark_document().await;

    // Ten demo servers with names in several scripts, for the screenshots.
    admin.click("#add-samples").await;
    wait_for("11 registered test servers", LIVE * 2, || async {
        let n = admin
            .js(
                "return Array.from(document.querySelectorAll('[data-testid=test-server-status]'))\
                 .filter(e => e.textContent.trim() === 'registered').length;",
            )
            .await;
        if n == 11 {
            Ok(())
        } else {
            Err(format!("{n} registered"))
        }
    })
    .await;
    viewer.wait_listed("轰炸机人", true, LIVE).await;
    viewer.wait_listed("Λαβύρινθος", true, LIVE).await;
    // Cards say "registered" when the master has them; the viewer's list
    // follows with the next push, which may still be on its way.
    wait_for("12 rows for the viewer", LIVE, || rows_are(&viewer, 12)).await;
    admin
        .js("document.getElementById('ts-title').scrollIntoView(); return null;")
        .await;
    admin.screenshot("admin").await;
    viewer.screenshot("list-with-test-servers").await;

    // Moving to the list inside the app keeps the test servers registered:
    // their sockets belong to the tab, not to the admin page.
    admin.mark_document().await;
    admin.click("nav a[href='/']").await;
    admin.wait_listed("Nordlicht Test", true, LIVE).await;
    assert!(admin.same_document().await, "in-app navigation reloaded");
    holds_for("Nordlicht Test listed for the viewer", LIVE, || {
        rows_are(&viewer, 12)
    })
    .await;
    // And back: the cards still show them registered.
    admin.click("nav a[href='/admin']").await;
    admin
        .wait_text(&test_server_status("Nordlicht Test"), "registered", LIVE)
        .await;

    // The card's controls reach the other browser: one player more, and
    // removing a sample server unlists it.
    admin
        .click(&format!(
            "{} button[aria-label='One player more']",
            test_server("Nordlicht Test")
        ))
        .await;
    viewer.wait_text(&row("Nordlicht Test"), "1/4", LIVE).await;
    admin
        .click(&format!("{} button.remove", test_server("Oasis ☀")))
        .await;
    viewer.wait_listed("Oasis ☀", false, LIVE).await;
    assert_eq!(viewer.rows().await.len(), 11);

    // A reload of the admin tab registers its servers again by itself,
    // with their stats.
    admin.client.refresh().await.expect("reload");
    admin
        .wait_text(
            &test_server_status("Nordlicht Test"),
            "registered",
            PAGE_READY,
        )
        .await;
    viewer.wait_text(&row("Nordlicht Test"), "1/4", LIVE).await;
    wait_for("all 11 servers back", LIVE, || async {
        let rows = viewer.rows().await;
        if rows.len() == 11 {
            Ok(())
        } else {
            Err(format!("{rows:?}"))
        }
    })
    .await;

    // Closing the admin's browser unlists its servers for everybody else.
    let closed = Instant::now();
    admin.close().await;
    viewer.wait_rows(&["Feuerland"], LIVE).await;
    eprintln!(
        "test servers gone {:?} after the admin closed",
        closed.elapsed()
    );
    assert!(viewer.same_document().await, "the viewer reloaded");
    viewer.close().await;
}

#[tokio::test]
async fn wrong_token_is_refused() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    open_live(&browser, &lobby, "/admin").await;
    sign_in(&browser, "not-the-token", "rejected").await;
    assert_eq!(
        browser.prop("#add-server", "disabled").await,
        Value::Bool(true)
    );
    assert_eq!(
        browser.prop("#add-samples", "disabled").await,
        Value::Bool(true)
    );
    // The right one still works afterwards.
    sign_in(&browser, ADMIN_TOKEN, "Signed in").await;
    assert_eq!(
        browser.prop("#add-server", "disabled").await,
        Value::Bool(false)
    );
    browser.close().await;
}

#[tokio::test]
async fn admin_form_shows_the_protocol_message_for_the_master_port() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    open_live(&browser, &lobby, "/admin").await;
    sign_in(&browser, ADMIN_TOKEN, "Signed in").await;
    browser.type_into("#new-name", "Feuerland").await;
    browser.type_into("#new-address", "192.168.0.10").await;
    browser.type_into("#new-port", "51963").await;
    browser
        .wait_text(
            "[data-testid=error-serverPort]",
            "port 51963 is reserved for the master server",
            LIVE,
        )
        .await;
    assert_eq!(
        browser.attr("#new-port", "aria-invalid").await.as_deref(),
        Some("true")
    );
    browser.screenshot("admin-validation").await;
    // Submitting it adds nothing.
    browser.click("#add-server").await;
    assert_eq!(browser.text("[data-testid=test-server]").await, None);
    browser.type_into("#new-port", "20000").await;
    wait_for("the port message to go", LIVE, || async {
        match browser.text("[data-testid=error-serverPort]").await {
            None => Ok(()),
            Some(t) => Err(t),
        }
    })
    .await;
    browser.close().await;
}

#[tokio::test]
async fn page_recovers_by_itself_after_the_bridge_restarts() {
    let _serial = e2e::serial().await;
    let mut lobby = Lobby::start_with_separate_master();
    let _a = GameServer::register(
        lobby.master,
        "Alpha",
        "192.0.2.1",
        20001,
        stats(1, 4, true, 1),
    );
    let _b = GameServer::register(
        lobby.master,
        "轰炸机人",
        "192.0.2.2",
        20002,
        stats(3, 4, true, 2),
    );
    let driver = Driver::start();
    let browser = driver.browser().await;
    open_live(&browser, &lobby, "/").await;
    browser.wait_rows(&["Alpha", "轰炸机人"], LIVE).await;
    browser.mark_document().await;

    let old_pid = lobby.bridge_pid();
    lobby.kill_bridge();
    let status = wait_for("the page to notice", LIVE, || async {
        let s = browser.status().await;
        if s.starts_with("Reconnecting") {
            Ok(s)
        } else {
            Err(s)
        }
    })
    .await;
    eprintln!("while the bridge is down the pill says {status:?}");
    // The last list stays on screen, marked as stale.
    assert_eq!(browser.rows().await, ["Alpha", "轰炸机人"]);
    browser
        .wait_text(
            "[data-testid=stale]",
            "connection to the lobby was lost",
            LIVE,
        )
        .await;

    let restarted = Instant::now();
    lobby.restart_bridge();
    assert_ne!(lobby.bridge_pid(), old_pid);
    browser.wait_live(RECOVERY).await;
    let recovered = restarted.elapsed();
    browser.wait_rows(&["Alpha", "轰炸机人"], LIVE).await;
    assert!(browser.same_document().await, "the page reloaded");
    // Pushes work again on the new connection.
    let _c = GameServer::register(
        lobby.master,
        "Bravo",
        "192.0.2.3",
        20003,
        stats(0, 2, true, 1),
    );
    browser
        .wait_rows(&["Alpha", "Bravo", "轰炸机人"], LIVE)
        .await;
    wait_for("the stale banner to go", LIVE, || async {
        match browser.text("[data-testid=stale]").await {
            None => Ok(()),
            Some(t) => Err(t),
        }
    })
    .await;
    eprintln!("live again {recovered:?} after the bridge restarted");
    browser.close().await;
}

#[tokio::test]
async fn embed_renders_rows_in_the_dark_theme_without_navigation() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let _servers = register_five(&lobby);
    let driver = Driver::start();
    let browser = driver.browser().await;
    browser.resize(800, 600).await;
    open_live(&browser, &lobby, "/embed?theme=dark&open=1").await;
    browser
        .wait_rows(&["Alpha", "Bravo", "轰炸机人"], LIVE)
        .await;
    assert_eq!(
        browser.attr("html", "data-theme").await.as_deref(),
        Some("dark")
    );
    let chrome = browser
        .js("return document.querySelectorAll('header, nav, #search, .filters').length;")
        .await;
    assert_eq!(chrome, Value::from(0), "the embed shows navigation chrome");
    // The dark theme really applies: a dark page background.
    let bg = browser
        .js("return getComputedStyle(document.body).backgroundColor;")
        .await;
    assert_eq!(bg, Value::from("rgb(15, 18, 24)"), "not dark: {bg}");
    browser.screenshot("embed-dark").await;
    browser.close().await;
}

#[tokio::test]
async fn phone_width_shows_the_list_without_sideways_scrolling() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let _servers = register_five(&lobby);
    let driver = Driver::start();
    let browser = driver.browser().await;
    browser.resize(390, 844).await;
    open_live(&browser, &lobby, "/").await;
    browser
        .wait_rows(
            &[
                "Alpha",
                "Bravo",
                "Charlie",
                "Server von Bösewicht",
                "轰炸机人",
            ],
            LIVE,
        )
        .await;
    let overflow = browser
        .js("return document.documentElement.scrollWidth - window.innerWidth;")
        .await;
    assert!(
        overflow.as_i64().is_some_and(|px| px <= 0),
        "the page scrolls sideways by {overflow} px at 390 px"
    );
    browser.screenshot("phone-390").await;
    browser.close().await;
}
