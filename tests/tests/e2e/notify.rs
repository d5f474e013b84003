//! "Notify me" end to end in headless Chromium, the in-tab path
//! (`docs/protocol.md` §2.4; docs/using.md, "Getting notified"): a player
//! on a server's page asks to be told when its lobby opens or 3 players
//! are in; while the tab is open it decides those events itself from the
//! live list and shows each once: as a system notification through the
//! page's service worker when notifications are allowed (granted through
//! DevTools, as a player's "Allow"), as a toast on the page (`role=status`)
//! when they are blocked. A flapping lobby shows nothing twice. A
//! favourite's bell leads to the control. axe-core checks the control, its
//! form and a toast in English and German.
//!
//! Real bridge and master, a game server over raw TCP, headless Chromium.
//! Holds [`e2e::serial`] like the other browser tests.

use e2e::{
    axe,
    browser::{Browser, Driver},
    game::{closed_feuerland, Stats},
    pages::{list::row, ListPage, ServerPage},
    product::Product,
};
use serde_json::json;

/// A browser in `lang` (`en` or `de`), as a player there would have it.
async fn browser_in(driver: &Driver, lang: &str) -> Browser {
    let args = match lang {
        "de" => ["--lang=de", "--accept-lang=de"],
        _ => ["--lang=en-US", "--accept-lang=en-US"],
    };
    driver.browser_with(&args).await
}

#[tokio::test]
async fn an_open_tab_shows_each_watched_event_once_as_a_notification_or_a_toast() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let (mut feuerland, key) = closed_feuerland(&product).await;
    let page_url = product.url(&format!("/server/{key}"));
    let origin = product.url("");
    let driver = Driver::start();

    // English, notifications allowed. A favourite's bell leads to the page.
    let en = browser_in(&driver, "en").await;
    en.grant_notifications(&origin).await;
    let list = ListPage::open(&en, &product.url("/")).await;
    list.find(&row("Feuerland")).await;
    list.star("Feuerland").await;
    let bell = format!("{} a.notify-link", row("Feuerland"));
    assert_eq!(
        list.attr(&bell, "aria-label").await.as_deref(),
        Some("Notify me about Feuerland")
    );
    list.click(&bell).await;
    let page = ServerPage::new(&en);
    page.wait_name("Feuerland").await;
    assert_eq!(
        en.eval("location.pathname").await,
        json!(format!("/server/{key}"))
    );
    page.click("[data-testid=notify-me]").await;
    page.find("[data-testid=notify-form]").await;
    axe::assert_no_violations(&en, "notify form · en").await;
    page.click("[data-testid=notify-form] button[type=button]")
        .await;
    page.notify_me(&["lobby-opened", "players-reached"], Some(3))
        .await;
    // This bridge has no contact for the push services: its Web Push is
    // off, and the page says so.
    page.wait_text(
        "[data-testid=notify-status]",
        "this lobby sends no push notifications",
    )
    .await;
    axe::assert_no_violations(&en, "notify on · en").await;
    let stored = en.eval("localStorage.getItem('lobby.watches')").await;
    assert!(
        stored.as_str().is_some_and(|s| s.contains(&format!(
            "{key}\tlobby-opened,players-reached\t3\tFeuerland"
        ))),
        "{stored}"
    );
    assert!(
        page.notifications().await.is_empty(),
        "nothing happened yet"
    );

    // German, notifications blocked: the page shows toasts.
    let de = browser_in(&driver, "de").await;
    de.cdp(
        "Browser.setPermission",
        json!({"origin": origin, "permission": {"name": "notifications"}, "setting": "denied"}),
    )
    .await;
    let page_de = ServerPage::open(&de, &page_url).await;
    page_de.wait_name("Feuerland").await;
    page_de.click("[data-testid=notify-me]").await;
    page_de.find("[data-testid=notify-form]").await;
    axe::assert_no_violations(&de, "notify form · de").await;
    page_de
        .click("[data-testid=notify-form] button[type=button]")
        .await;
    page_de.notify_me(&["lobby-opened"], None).await;
    page_de
        .wait_text("[data-testid=notify-status]", "blockiert")
        .await;
    axe::assert_no_violations(&de, "notify on · de").await;

    // The lobby opens with 3 players: both events, once each.
    feuerland.update(Stats::of_four(3, true));
    let lobby_tag = format!("{key}:lobby-opened");
    let players_tag = format!("{key}:players-reached");
    let shown = page.wait_notifications(&[&players_tag, &lobby_tag]).await;
    let find = |tag: &str| {
        let mine: Vec<_> = shown.iter().filter(|n| n.tag == tag).collect();
        assert_eq!(mine.len(), 1, "{tag}: {shown:?}");
        mine[0].clone()
    };
    let opened = find(&lobby_tag);
    assert_eq!(
        (opened.title.as_str(), opened.body.as_str()),
        ("Feuerland", "The lobby is open, 3 of 4 players")
    );
    let reached = find(&players_tag);
    assert_eq!(reached.body, "3 of 4 players are in");
    assert!(page.toasts().await.is_empty(), "allowed: no toast");

    page_de
        .wait_text(
            "[data-testid=toast]",
            "Die Lobby ist offen, 3 von 4 Spielern",
        )
        .await;
    let toasts = page_de.toasts().await;
    assert_eq!(toasts.len(), 1, "{toasts:?}");
    assert_eq!(toasts[0].0, lobby_tag);
    assert_eq!(
        de.attr("[data-testid=toasts]", "role").await.as_deref(),
        Some("status")
    );
    axe::assert_no_violations(&de, "toast · de").await;
    page_de.click("[data-testid=toast] .toast-close").await;
    page_de.wait_gone("[data-testid=toast]").await;

    // Flapping: the lobby closes and opens again within the cooldown. Each
    // tab decides its events for the closing and then for the opening
    // (the list versions it notes), and shows nothing more.
    let before = (page.notices().await, page_de.notices().await);
    feuerland.update(Stats::of_four(1, false));
    page.wait_state("lobby", "In game").await;
    page_de.wait_state("lobby", "Im Spiel").await;
    let closed = (
        page.wait_notices_after(before.0.looked).await,
        page_de.wait_notices_after(before.1.looked).await,
    );
    feuerland.update(Stats::of_four(3, true));
    page.wait_state("lobby", "Open").await;
    page_de.wait_state("lobby", "Offen").await;
    let opened = (
        page.wait_notices_after(closed.0.looked).await,
        page_de.wait_notices_after(closed.1.looked).await,
    );
    assert_eq!(opened.0.settled, before.0.settled, "shown again in en");
    assert_eq!(opened.1.settled, before.1.settled, "shown again in de");
    let now = page.notifications().await;
    let again: Vec<_> = now.iter().filter(|n| !shown.contains(n)).collect();
    assert!(again.is_empty(), "shown again: {again:?}");
    assert!(page_de.toasts().await.is_empty(), "a toast again");

    // Turned off, the watch is gone from the page and from storage.
    page.click("[data-testid=notify-off]").await;
    page.find("[data-testid=notify-me]").await;
    let stored = en.eval("localStorage.getItem('lobby.watches')").await;
    assert_eq!(stored, json!("lobby-watches-1"));
}
