//! The front end's own defences (SECURITY.md, "Front end"), in Chromium:
//! a link that names another bridge (`?bridge=`) never gets it the admin
//! token, the admin link the bridge prints signs in and leaves the address
//! bar without the token, and a name with a bidi override is isolated.
//!
//! Holds [`e2e::serial`] like the other browser tests.

use e2e::{
    browser::{js_str, Browser, Driver},
    fake_bridge::FakeBridge,
    game::{GameServer, Stats},
    pages::{admin::card, games, list::row, AdminPage, GamesPage, ListPage},
    paths,
    product::{Product, ADMIN_TOKEN},
    until,
};
use gamequery::{
    fake::{GameAgentMaster, GameAgentServer},
    gameagent::{Player, Status},
};
use lobby_testkit::launch::BridgeLaunch;

/// Fails when anything the fake got carries the token or a sign-in.
fn no_token(fake: &FakeBridge) -> Result<(), String> {
    let leak = |s: &str| s.contains(ADMIN_TOKEN) || s.contains("bridgeAuth");
    for c in fake.conns() {
        if leak(&c.request) {
            return Err(format!("the foreign bridge got {c:?}"));
        }
    }
    for f in fake.frames() {
        if leak(&f.text) {
            return Err(format!("the foreign bridge got {f:?}"));
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_foreign_bridge_in_the_link_never_gets_the_token() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    // A bridge a crafted link could name: it answers nothing and records
    // everything it gets.
    let fake = FakeBridge::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let admin = AdminPage::new(&browser);

    // A signed-in tab with a test server: the token is in sessionStorage.
    admin.goto(&product.url("/admin")).await;
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    admin.add_test_server("Guard Test").await;
    admin.wait_card("Guard Test", "registered").await;

    // The same tab follows a crafted link naming another bridge.
    admin
        .goto(&product.url(&format!("/admin?bridge={}", fake.url())))
        .await;
    // A loopback page may list from a loopback bridge (development), so the
    // list's socket goes there, with nothing but the subscription.
    fake.wait_subscribe(0).await;
    // A user who tries to sign in here anyway gets no form to do it with.
    let form = admin
        .js("const b = document.querySelector('#admin-login'); if (b) b.click(); return !!b;")
        .await;
    assert_eq!(
        form,
        serde_json::json!(false),
        "a sign-in form for the foreign bridge"
    );
    // The test server signed in again at the bridge that served the page
    // and registered there: the master's answer to its own query lists it
    // (the list on the page comes from the foreign bridge and never will).
    admin.wait_card("Guard Test", "registered").await;
    // The page's later frame on the foreign socket: its poll, as the
    // foreign bridge pushes no list. What the page sent there when it
    // opened came before it; the sign-in with the stored token is done
    // (above). So the token would be there by now.
    until("the page's first poll of the foreign bridge", || async {
        match fake.queries(0).len() {
            0 => Err(format!("{:?}", fake.frames_on(0))),
            n => Ok(n),
        }
    })
    .await;
    if let Err(leak) = no_token(&fake) {
        panic!("{leak}");
    }
    eprintln!(
        "the foreign bridge got: {:?} {:?}",
        fake.conns(),
        fake.frames()
    );
}

#[tokio::test]
async fn the_printed_admin_link_signs_in_and_leaves_the_address_bar() {
    let _serial = e2e::serial().await;
    // A bridge without a token of its own generates one and prints the link.
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("bridge.log");
    let mut launch = BridgeLaunch::plain(paths::binary("bridge"));
    launch.data_dir = Some(dir.path().join("data"));
    launch.static_dir = Some(paths::dist_dir());
    // stdout is a pipe of its own here (the log goes to the file): the
    // link comes on stdout, after the readiness line, and never into the log.
    let (_bridge, mut link) = launch
        .start_ready(&log, &["admin page: "])
        .unwrap_or_else(|e| panic!("{e}"));
    let link = link.remove(0);
    let token = link
        .split_once("#token=")
        .map(|(_, t)| t.to_owned())
        .unwrap_or_else(|| panic!("no token in the link {link:?}"));
    let logged = std::fs::read_to_string(&log).expect("the bridge's log");
    assert!(
        !logged.contains(&token),
        "the token is in the log:\n{logged}"
    );

    let driver = Driver::start();
    let browser = driver.browser().await;
    browser.goto(&link).await;
    browser
        .wait_text("[data-testid=auth-result]", "Signed in")
        .await;
    let href = browser.js("return location.href;").await;
    let href = href.as_str().unwrap_or_default();
    assert!(
        href.ends_with("/admin") && !href.contains(&token) && !href.contains('#'),
        "the address bar still holds the token: {href}"
    );
    // The history entry was replaced, not added: back leaves the page.
    let entries = browser.js("return history.length;").await;
    assert_eq!(
        entries,
        serde_json::json!(2),
        "history entries after the link"
    );
}

/// Whether the element that holds exactly `name` inside `scope` isolates
/// it (`unicode-bidi: isolate`, from `dir` or `<bdi>`), so a bidi control in
/// the name cannot reorder anything beside it.
async fn isolated(browser: &Browser, scope: &str, name: &str) -> Result<(), String> {
    let (scope_js, name) = (js_str(scope), js_str(name));
    let script = format!(
        "const scope = document.querySelector({scope_js}); if (!scope) return 'no scope';
         const walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT);
         let node; while ((node = walker.nextNode()) && node.data !== {name}) {{}}
         if (!node) return 'no text node with the name';
         const e = node.parentElement, b = getComputedStyle(e).unicodeBidi;
         return e.textContent === {name} && b === 'isolate' ? 'ok' : b + ' on ' + e.outerHTML;"
    );
    match browser.js(&script).await.as_str() {
        Some("ok") => Ok(()),
        other => Err(format!("{scope}: {other:?}")),
    }
}

/// A fake GameAgent server named `game_name` with one player
/// `player_name`, and a master listing it.
async fn a_game_source(game_name: &str, player_name: &str) -> (GameAgentServer, GameAgentMaster) {
    let game = GameAgentServer::start(
        Status {
            players: 1,
            max_players: 8,
            level: "Karnak".into(),
            game_type: "Fragmatch".into(),
            version: "1.10".into(),
            game_name: "serioussamse".into(),
            session_name: game_name.into(),
            keys: vec![],
        },
        vec![Player {
            index: 0,
            name: Some(player_name.into()),
            frags: 3,
            ping: 40,
        }],
    )
    .await
    .expect("fake GameAgent server");
    let master = GameAgentMaster::start(vec![game.game_addr()])
        .await
        .expect("fake GameAgent master");
    (game, master)
}

#[tokio::test]
async fn a_name_with_a_bidi_override_is_isolated() {
    let _serial = e2e::serial().await;
    // Another game's server (names are not validated there) and its player.
    let game_name = "Arena\u{202E}3 vs 1";
    let player_name = "Bob\u{202E}kcab";
    let (_game, master) = a_game_source(game_name, player_name).await;
    let product = Product::start_with(&[
        "--gameagent-master",
        &master.addr().to_string(),
        "--game-poll-interval",
        "1s",
        // The fake is on 127.0.0.1.
        "--game-allow-private",
    ]);
    let name = "Evil\u{202E}gnp.exe";
    let stats = Stats {
        current: 1,
        max: 4,
        open: true,
        mode: 1,
    };
    let _server = GameServer::register(product.master, name, "192.0.2.7", 20007, stats);
    let driver = Driver::start();
    let browser = driver.browser().await;

    let list = ListPage::new(&browser);
    list.goto(&product.url("/")).await;
    list.wait_listed(name, true).await;
    let name_cell = format!("{} .c-name", row(name));
    until("the row's name isolated", || {
        isolated(&browser, &name_cell, name)
    })
    .await;

    let source = format!("gameagent:{}", master.addr());
    browser
        .goto(&product.url(&format!("/?src={}", source.replace(':', "%3A"))))
        .await;
    let game_row = games::row(game_name);
    until("the game row's name isolated", || {
        isolated(&browser, &game_row, game_name)
    })
    .await;
    GamesPage::new(&browser).open_detail(game_name).await;
    until("the detail's title isolated", || {
        isolated(&browser, "#detail-title", game_name)
    })
    .await;
    let player = format!("[data-testid=detail-player][data-name=\"{player_name}\"]");
    until("the player's name isolated", || {
        isolated(&browser, &player, player_name)
    })
    .await;

    let admin = AdminPage::new(&browser);
    admin.goto(&product.url("/admin")).await;
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    let test_name = "Test\u{202E}Bidi";
    admin.add_test_server(test_name).await;
    let test_card = card(test_name);
    until("the test server's name isolated", || {
        isolated(&browser, &test_card, test_name)
    })
    .await;
}
