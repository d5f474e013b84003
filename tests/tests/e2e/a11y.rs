//! Accessibility end to end (docs/using.md, "Accessibility"): axe-core finds
//! no violation on any page — the list, the admin page signed in with a
//! test server, its webhooks (a field's error, a new webhook's secret, a
//! test's delivery, a Discord status card's preview in the form and in
//! the list), the embed, the "not found" page, a server's page with
//! "Notify me" open and on, the rows' and the server page's Join links,
//! its week's heatmap and the lobby's, the list with the master
//! or the bridge down, other games' tabs — in English and German, in the
//! light and the dark scheme (each once: [`VARIANTS`]); and the keyboard
//! reaches every control of the list and the admin page with a visible
//! focus ring, and works them.
//!
//! Real bridge, headless Chromium, game servers over raw TCP and fake
//! GameAgent servers over UDP. Holds [`e2e::serial`] like the other
//! browser tests.

use e2e::{
    axe,
    browser::{Browser, Driver},
    game::{GameServer, Stats},
    pages::{games, list::row, AdminPage, GamesPage, ListPage, ServerPage},
    product::{Product, ADMIN_TOKEN},
    receiver::Receiver,
    until,
};
use fantoccini::key::Key;
use gamequery::{
    fake::{GameAgentMaster, GameAgentServer},
    gameagent::{Player, Status},
};
use serde_json::{json, Value};

/// A starred server that then goes away: the list shows it greyed, as an
/// offline favourite.
const GONE: &str = "Verlassen";
/// The always-present server each browser stars.
const STARRED: &str = "Alpha";

fn stats(current: u32, max: u8, open: bool, mode: u8) -> Stats {
    Stats {
        current,
        max,
        open,
        mode,
    }
}

/// A server in each state a row shows: lobby open, in game, full, more
/// players than slots, empty.
fn register_servers(product: &Product) -> Vec<GameServer> {
    [
        ("Alpha", 20001, stats(1, 4, true, 1)),
        ("Bravo", 20002, stats(4, 4, false, 2)),
        ("Charlie", 20003, stats(0, 2, true, 1)),
        ("轰炸机人", 20004, stats(5, 4, false, 2)),
    ]
    .into_iter()
    .map(|(name, port, s)| GameServer::register(product.master, name, "192.0.2.1", port, s))
    .collect()
}

/// What each page is checked in: its language (`<html lang>`, the Chromium
/// switches that make the browser prefer it) and the system colour scheme.
struct Variant {
    lang: &'static str,
    args: &'static [&'static str],
    dark: bool,
}

/// Each language once and each scheme once: English in the light scheme,
/// German in the dark one. axe's rules look either at the text and the
/// structure (names, labels, `lang`: the language's) or at the colours
/// (contrast: the scheme's), and the same components render in every
/// variant, so the other two pairs would find nothing these two do not. The
/// forced themes (`?theme=dark`, `?theme=light`) cross them on the embeds.
const VARIANTS: [Variant; 2] = [
    Variant {
        lang: "en",
        args: &["--lang=en-US", "--accept-lang=en-US"],
        dark: false,
    },
    Variant {
        lang: "de",
        args: &["--lang=de", "--accept-lang=de"],
        dark: true,
    },
];

impl Variant {
    fn label(&self) -> String {
        format!(
            "{} · {}",
            self.lang,
            if self.dark { "dark" } else { "light" }
        )
    }

    async fn browser(&self, driver: &Driver) -> Browser {
        let mut args = self.args.to_vec();
        if self.dark {
            args.push("--force-dark-mode");
        }
        driver.browser_with(&args).await
    }
}

/// The pages checked in every variant, one line each: a label, the path,
/// and what is on the page once it shows its content. `alpha` is the key of
/// the server "Alpha" (its page and its card for an iframe).
fn pages(alpha: &str) -> Vec<(&'static str, String, String)> {
    let state = "[data-testid=server-page] [data-testid=server-online]".to_owned();
    vec![
        ("list", "/".into(), "[data-testid=offline-favourite]".into()),
        (
            "list with Join",
            "/".into(),
            format!("{} [data-testid=join]", row("Alpha")),
        ),
        ("embed", "/embed".into(), row("Alpha")),
        ("embed dark", "/embed?theme=dark".into(), row("Alpha")),
        ("embed light", "/embed?theme=light".into(), row("Alpha")),
        ("not found", "/no-such-page".into(), "main h1".into()),
        ("server page", format!("/server/{alpha}"), state.clone()),
        (
            "server page with its week",
            format!("/server/{alpha}"),
            "[data-testid=server-week] [data-testid=week-sentence]".into(),
        ),
        (
            "list with the lobby's week",
            "/".into(),
            "[data-testid=lobby-week] [data-testid=week-sentence]".into(),
        ),
        (
            "server card",
            format!("/embed/server/{alpha}"),
            state.clone(),
        ),
        (
            "server card dark",
            format!("/embed/server/{alpha}?theme=dark"),
            state,
        ),
    ]
}

/// Opens `path` and waits until it is live, in `variant`'s language and
/// scheme, and shows `ready`.
async fn open(browser: &Browser, product: &Product, path: &str, ready: &str, variant: &Variant) {
    browser.goto(&product.url(path)).await;
    // A server's card for an iframe has no header, hence no status pill.
    if !path.starts_with("/embed/server/") {
        browser.find("[data-testid=status].live").await;
    }
    browser.find(ready).await;
    let lang = browser.attr("html", "lang").await;
    assert_eq!(lang.as_deref(), Some(variant.lang), "{path}");
    let dark = browser
        .eval("matchMedia('(prefers-color-scheme: dark)').matches")
        .await;
    assert_eq!(dark, Value::Bool(variant.dark), "{path}");
}

/// Stars [`STARRED`] and [`GONE`], then takes [`GONE`] off the master, so
/// the list shows a favourite and an offline favourite.
async fn favourites(browser: &Browser, product: &Product, variant: &Variant) {
    let gone = GameServer::register(
        product.master,
        GONE,
        "192.0.2.9",
        20009,
        stats(1, 4, true, 1),
    );
    open(browser, product, "/", &row(GONE), variant).await;
    let page = ListPage::new(browser);
    for name in [STARRED, GONE] {
        page.star(name).await;
        page.find(&format!("{}[data-favourite=true]", row(name)))
            .await;
    }
    drop(gone);
    page.find("[data-testid=offline-favourite]").await;
}

/// Signs in on the admin page and adds a test server, waiting until the
/// master has it.
async fn admin_with_a_test_server(browser: &Browser, product: &Product, variant: &Variant) {
    open(browser, product, "/admin", "#admin-token", variant).await;
    let admin = AdminPage::new(browser);
    admin.type_into("#admin-token", ADMIN_TOKEN).await;
    admin.click("#admin-login").await;
    admin.find("[data-testid=auth-result].ok").await;
    admin
        .add_test_server(&format!("A11y {}", variant.label()))
        .await;
    admin.find("[data-testid=test-server-status].ok").await;
}

/// The checked pages' reports; [`Reports::assert_clean`] fails with all of
/// them, so one run shows every page's violations.
#[derive(Default)]
struct Reports {
    checked: usize,
    broken: Vec<String>,
}

impl Reports {
    /// Runs axe-core on what `browser` shows now, as `label`.
    async fn check(&mut self, browser: &Browser, label: &str) {
        let report = axe::report(browser, label).await;
        self.checked += 1;
        if !report.is_empty() {
            self.broken.push(report);
        }
    }

    fn assert_clean(&self) {
        eprintln!(
            "axe-core checked {} pages; {} had violations",
            self.checked,
            self.broken.len()
        );
        assert!(
            self.broken.is_empty(),
            "accessibility violations on {} of {} pages:\n{}",
            self.broken.len(),
            self.checked,
            self.broken.join("\n")
        );
    }
}

#[tokio::test]
async fn axe_finds_nothing_on_any_page_in_english_and_german() {
    let _serial = e2e::serial().await;
    // With Join links on the rows and the server's page.
    let product = Product::start_with(&["--join-url", "bomber://{address}:{port}"]);
    let _servers = register_servers(&product);
    let alpha = product.key_of("Alpha").await;
    let driver = Driver::start();
    let mut reports = Reports::default();
    for variant in &VARIANTS {
        let browser = variant.browser(&driver).await;
        favourites(&browser, &product, variant).await;
        for (page, path, ready) in pages(&alpha) {
            open(&browser, &product, &path, &ready, variant).await;
            reports
                .check(&browser, &format!("{page} · {}", variant.label()))
                .await;
        }
        // "Notify me" on a server's page: its form, then turned on.
        let notify = "[data-testid=notify-me]";
        open(
            &browser,
            &product,
            &format!("/server/{alpha}"),
            notify,
            variant,
        )
        .await;
        let page = ServerPage::new(&browser);
        page.click(notify).await;
        page.find("[data-testid=notify-form]").await;
        let label = format!("notify form · {}", variant.label());
        reports.check(&browser, &label).await;
        page.click("[data-testid=notify-on]").await;
        page.find("[data-testid=notify-summary]").await;
        let label = format!("notify on · {}", variant.label());
        reports.check(&browser, &label).await;
        admin_with_a_test_server(&browser, &product, variant).await;
        let label = format!("admin · {}", variant.label());
        reports.check(&browser, &label).await;
        // The form with an error under a field.
        let admin = AdminPage::new(&browser);
        admin
            .fill_server("Feuerland", "192.168.0.10", "51963")
            .await;
        admin.find("[data-testid=error-serverPort]").await;
        reports
            .check(&browser, &format!("{label} · form error"))
            .await;
        browser.close().await;
    }
    reports.assert_clean();
}

#[tokio::test]
async fn axe_finds_nothing_on_the_webhooks_in_english_and_german() {
    let _serial = e2e::serial().await;
    let product = Product::start_with(&[
        "--webhook-allow-private",
        "--public-url",
        "https://lobby.example",
    ]);
    // Listed servers, so a status card's preview shows names linking to
    // their pages.
    let _servers = register_servers(&product);
    let mut receiver = Receiver::start().await;
    let host = receiver.host.clone();
    let driver = Driver::start();
    let mut reports = Reports::default();
    for variant in &VARIANTS {
        let browser = variant.browser(&driver).await;
        open(&browser, &product, "/admin", "#admin-token", variant).await;
        let admin = AdminPage::new(&browser);
        admin.type_into("#admin-token", ADMIN_TOKEN).await;
        admin.click("#admin-login").await;
        admin.find("[data-testid=auth-result].ok").await;
        admin.find("[data-testid=no-webhooks]").await;
        let label = format!("webhooks · {}", variant.label());
        // The status card's format with its preview: the card the bridge
        // would post now, the busiest server first.
        admin.choose_format("discord-card").await;
        admin
            .wait_text("[data-testid=card-preview] .embed-title", "4 online")
            .await;
        admin
            .wait_text(
                "[data-testid=card-preview] .embed-description a",
                "轰炸机人",
            )
            .await;
        reports
            .check(&browser, &format!("{label} · status card preview"))
            .await;
        admin.choose_format("standard").await;
        // The bridge's 400 beside the URL field (no such IPv4 address).
        admin.create_webhook("http://999.1.1.1/hook").await;
        admin.find("[data-testid=webhook-error-url]").await;
        reports
            .check(&browser, &format!("{label} · field error"))
            .await;
        // A new webhook's secret, and a test's delivery in its list.
        admin.create_webhook(&receiver.url).await;
        admin.webhook_secret().await;
        admin.click_on_webhook(&host, "send-test").await;
        receiver.next().await;
        admin
            .wait_webhook(&host, "[data-testid=delivery-outcome]", "HTTP 204")
            .await;
        reports
            .check(&browser, &format!("{label} · secret and delivery"))
            .await;
        admin.click_on_webhook(&host, "delete").await;
        admin.find("[data-testid=no-webhooks]").await;
        // A status card in the list, with its preview.
        admin.choose_format("discord-card").await;
        admin.create_webhook(&receiver.url).await;
        admin.webhook_secret().await;
        admin.click_on_webhook(&host, "show-preview").await;
        admin
            .wait_webhook(&host, "[data-testid=card-preview] .embed-title", "4 online")
            .await;
        reports
            .check(
                &browser,
                &format!("{label} · a status card and its preview"),
            )
            .await;
        admin.click_on_webhook(&host, "delete").await;
        admin.find("[data-testid=no-webhooks]").await;
        browser.close().await;
    }
    reports.assert_clean();
}

#[tokio::test]
async fn axe_finds_nothing_while_the_master_or_the_bridge_is_down() {
    let _serial = e2e::serial().await;
    let mut product = Product::start_with_separate_master();
    let _servers = register_servers(&product);
    let driver = Driver::start();
    let mut browsers = Vec::new();
    for variant in &VARIANTS {
        let browser = variant.browser(&driver).await;
        open(&browser, &product, "/", &row("Alpha"), variant).await;
        browsers.push((variant, browser));
    }
    let mut reports = Reports::default();
    // "Master unreachable": the bridge is up, its master is not.
    product.kill_master();
    for (variant, browser) in &browsers {
        browser.find("[data-testid=status].down").await;
        let label = format!("list, master unreachable · {}", variant.label());
        reports.check(browser, &label).await;
    }
    // "Reconnecting": the page lost the bridge and shows the last list.
    product.kill_bridge();
    for (variant, browser) in &browsers {
        browser.find("[data-testid=status].wait").await;
        browser.find("[data-testid=stale]").await;
        let label = format!("list, reconnecting · {}", variant.label());
        reports.check(browser, &label).await;
    }
    for (_, browser) in browsers {
        browser.close().await;
    }
    reports.assert_clean();
}

fn game_status(name: &str, players: u32, max: u32) -> Status {
    Status {
        players,
        max_players: max,
        level: "Karnak".into(),
        game_type: "Cooperative".into(),
        version: "1.10".into(),
        game_name: "serioussamse".into(),
        session_name: name.into(),
        keys: vec![],
    }
}

#[tokio::test]
async fn axe_finds_nothing_on_other_games_tabs() {
    let _serial = e2e::serial().await;
    // A GameAgent master listing a server that answers and one that does
    // not (an offline row), and a master that never answers (the tab's
    // error).
    let player = Player {
        index: 0,
        name: Some("Bärbel".into()),
        frags: 3,
        ping: 45,
    };
    let online = GameAgentServer::start(game_status("Awesome Server", 1, 8), vec![player]);
    let offline = GameAgentServer::start(game_status("Gone", 0, 8), vec![]);
    let (online, offline) = tokio::join!(online, offline);
    let (online, offline) = (online.expect("fake server"), offline.expect("fake server"));
    offline.set_answering(false);
    let master = GameAgentMaster::start(vec![online.game_addr(), offline.game_addr()])
        .await
        .expect("fake master");
    let silent = crate::games::silent_master().await;
    let (master_id, silent_id) = (
        format!("gameagent:{}", master.addr()),
        format!("gameagent:{}", silent.addr()),
    );
    let product = Product::start_with(&[
        "--gameagent-master",
        &master.addr().to_string(),
        "--gameagent-master",
        &silent.addr().to_string(),
        "--game-poll-interval",
        "1s",
        "--game-query-timeout",
        "300ms",
        "--game-query-retries",
        "0",
        // The fakes are on 127.0.0.1.
        "--game-allow-private",
    ]);
    let _servers = register_servers(&product);
    let driver = Driver::start();
    let mut reports = Reports::default();
    let offline_row = "tr[data-testid=game-row][data-online=false]";
    for variant in &VARIANTS {
        let browser = variant.browser(&driver).await;
        let label = variant.label();
        open(&browser, &product, "/", &games::tab(&silent_id), variant).await;
        reports
            .check(&browser, &format!("list with source tabs · {label}"))
            .await;
        let src = format!("/?src={master_id}");
        open(&browser, &product, &src, offline_row, variant).await;
        browser.find(&games::row("Awesome Server")).await;
        reports
            .check(&browser, &format!("game table · {label}"))
            .await;
        GamesPage::new(&browser).open_detail("Awesome Server").await;
        browser.find("tr[data-testid=detail-player]").await;
        reports
            .check(&browser, &format!("game detail · {label}"))
            .await;
        let src = format!("/?src={silent_id}");
        open(
            &browser,
            &product,
            &src,
            "[data-testid=source-error]",
            variant,
        )
        .await;
        reports
            .check(&browser, &format!("source error · {label}"))
            .await;
        browser.close().await;
    }
    reports.assert_clean();
}

/// The focused element: a short description, and whether it shows the
/// page's focus ring (a solid outline of 2 px or more in a colour, or a box
/// shadow), not just the browser's thin default.
const FOCUSED: &str = "(() => { const e = document.activeElement; \
    if (!e || e === document.body) return null; \
    const s = getComputedStyle(e); \
    const ring = (s.outlineStyle === 'solid' && parseFloat(s.outlineWidth) >= 2 \
      && s.outlineColor !== 'rgba(0, 0, 0, 0)') || s.boxShadow !== 'none'; \
    const what = e.id ? '#' + e.id : e.tagName.toLowerCase() + \
      Array.from(e.classList).map(c => '.' + c).join('') + \
      (e.getAttribute('href') ? '[href=' + e.getAttribute('href') + ']' : '') + \
      (e.closest('th[data-sort]') ? '[sort=' + e.closest('th[data-sort]').dataset.sort + ']' : ''); \
    return {what, ring, visible: e.matches(':focus-visible'), \
      outline: s.outlineStyle + ' ' + s.outlineWidth + ' ' + s.outlineColor}; })()";

/// Presses Tab until the focus leaves the page or comes back round (at most
/// `max` times) and returns what it reached, in order; panics at the first
/// element without a visible focus indicator.
async fn tab_through(browser: &Browser, max: usize) -> Vec<String> {
    let mut reached: Vec<String> = Vec::new();
    for _ in 0..max {
        browser.press(Key::Tab).await;
        let f = browser.eval(FOCUSED).await;
        if f.is_null() {
            break;
        }
        let what = f["what"].as_str().unwrap_or_default().to_owned();
        assert_eq!(
            (f["ring"].as_bool(), f["visible"].as_bool()),
            (Some(true), Some(true)),
            "{what} has the keyboard focus but shows no focus ring: {f}"
        );
        if reached.contains(&what) && what == reached[0] {
            break;
        }
        reached.push(what);
    }
    reached
}

#[tokio::test]
async fn the_keyboard_reaches_every_control_with_a_visible_focus() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let _servers = register_servers(&product);
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::open(&browser, &product.url("/")).await;
    page.wait_row_count(4).await;

    let reached = tab_through(&page, 80).await;
    eprintln!("Tab reached, in order: {reached:?}");
    for control in [
        "a.brand[href=/]",
        "a.active[href=/]",
        "a[href=/admin]",
        "#lang",
        "#search",
        "#filter-open",
        "#filter-favourites",
        "#filter-mode",
        "button.sort[sort=name]",
        "button.sort[sort=players]",
        "button.star",
        "button.hide-row",
        "button.copy",
    ] {
        assert!(
            reached.iter().any(|r| r == control),
            "Tab never reached {control}; it reached {reached:?}"
        );
    }

    // Enter on a focused sort button sorts, as a click would.
    page.goto(&product.url("/")).await;
    page.wait_row_count(4).await;
    until("the players' sort button to get the focus", || async {
        page.press(Key::Tab).await;
        let f = page.eval(FOCUSED).await;
        match f["what"].as_str() {
            Some("button.sort[sort=players]") => Ok(()),
            _ => Err(f.to_string()),
        }
    })
    .await;
    page.screenshot("keyboard-focus").await;
    page.press(Key::Enter).await;
    page.wait_eq(
        "the players' column sorted",
        "document.querySelector('th[data-sort=players]').getAttribute('aria-sort')",
        json!("descending"),
    )
    .await;
    browser.close().await;
}

#[tokio::test]
async fn the_admin_page_works_from_the_keyboard() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let admin = AdminPage::open(&browser, &product.url("/admin")).await;

    // Sign in: Tab to the token field, type, Enter.
    until("the token field to get the focus", || async {
        admin.press(Key::Tab).await;
        let f = admin.eval(FOCUSED).await;
        match f["what"].as_str() {
            Some("#admin-token") => Ok(()),
            _ => Err(f.to_string()),
        }
    })
    .await;
    admin.type_into("#admin-token", ADMIN_TOKEN).await;
    admin.press(Key::Enter).await;
    admin.find("[data-testid=auth-result].ok").await;

    // From there on, Tab reaches the form and its buttons, each with the ring.
    let reached = tab_through(&admin, 40).await;
    eprintln!("Tab reached, in order: {reached:?}");
    for control in [
        "#admin-login",
        "#new-name",
        "#new-address",
        "#new-port",
        "#add-server",
        "#add-samples",
    ] {
        assert!(
            reached.iter().any(|r| r == control),
            "Tab never reached {control}; it reached {reached:?}"
        );
    }

    // Enter in the form adds the server; its card's controls take the focus too.
    admin
        .fill_server("Tastatur", "test.example.org", "20500")
        .await;
    admin.press(Key::Enter).await;
    admin.wait_card("Tastatur", "registered").await;
    let card_input = format!("{} input", e2e::pages::admin::card("Tastatur"));
    admin
        .js(&format!(
            "document.querySelector({}).focus(); return null;",
            e2e::browser::js_str(&card_input)
        ))
        .await;
    let reached = tab_through(&admin, 20).await;
    assert!(
        reached.iter().any(|r| r == "button.danger.remove"),
        "Tab never reached the card's remove button: {reached:?}"
    );
    browser.close().await;
}
