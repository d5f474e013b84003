//! Web Push end to end in a real Firefox ESR (`docs/protocol.md` §2.4;
//! docs/using.md, "Getting notified"): the player turns "Notify me" on in
//! the page; Firefox subscribes with the bridge's VAPID key at a push
//! service the test runs on loopback ([`e2e::push_service`], Mozilla's
//! push protocol); the page sends the watch to the bridge (which runs with
//! `--push-allow-insecure`, so it accepts that `http` endpoint on
//! loopback). With no lobby tab open, the lobby opens: the bridge encrypts
//! and signs a push, the stand-in forwards it to Firefox, Firefox decrypts
//! it (its ack says so) and the page's service worker shows it, read back
//! with `registration.getNotifications()`. Turning it off unsubscribes.
//!
//! Needs `firefox-esr` and `geckodriver` (`FIREFOX`, `GECKODRIVER` name
//! others). Holds [`e2e::serial`] like the other browser tests.

use e2e::{
    firefox::Gecko,
    game::{GameServer, Stats},
    pages::ServerPage,
    process::http_get,
    product::Product,
    push_service::PushService,
    until,
};
use serde_json::Value;

#[tokio::test]
async fn a_push_reaches_firefoxs_service_worker_with_no_lobby_tab_open() {
    let _serial = e2e::serial().await;
    let service = PushService::start().await;
    let product = Product::start_with(&[
        "--push-allow-insecure",
        "--push-contact",
        "mailto:ops@lobby.example",
    ]);
    let mut feuerland = GameServer::register(
        product.master,
        "Feuerland",
        "192.0.2.10",
        20000,
        Stats::of_four(1, false),
    );
    let key = product.key_of("Feuerland").await;
    let vapid = http_get(product.http, "/api/push/key").expect("GET /api/push/key");
    assert_eq!(vapid.status, 200, "{}", vapid.body);
    let vapid: Value = serde_json::from_str(&vapid.body).expect("JSON");
    let vapid = vapid["publicKey"].as_str().expect("publicKey").to_owned();

    let gecko = Gecko::start();
    let firefox = gecko.browser(&service.server_url()).await;
    let page = ServerPage::open(&firefox, &product.url(&format!("/server/{key}"))).await;
    page.wait_name("Feuerland").await;
    page.notify_me(&["lobby-opened"], None).await;
    page.wait_text(
        "[data-testid=notify-status]",
        "even while this page is closed",
    )
    .await;
    service.log(|l| {
        assert_eq!(l.registrations.len(), 1, "{:?}", l.registrations);
        // Firefox pads the key it registers with; the bridge's has none.
        let asked = l.registrations[0].key.as_deref().unwrap_or_default();
        assert_eq!(asked.trim_end_matches('='), vapid);
    });

    // No lobby tab open: only the service worker can show it.
    firefox.goto("about:blank").await;
    feuerland.update(Stats::of_four(1, true));
    let ack = until("Firefox's ack", || async {
        service.log(|l| l.acks.first().cloned()).ok_or_else(|| {
            // What the bridge says it did, for a failure's message.
            let metrics = http_get(product.http, "/metrics")
                .map(|r| r.body)
                .unwrap_or_default();
            let push: Vec<&str> = metrics
                .lines()
                .filter(|l| !l.starts_with('#') && (l.contains("push") || l.contains("watch")))
                .collect();
            let list = http_get(product.http, "/api/servers")
                .map(|r| r.body)
                .unwrap_or_default();
            service.log(|l| format!("{l:?}\n{}\n{list}", push.join("\n")))
        })
    })
    .await;
    assert_eq!(ack.code, 100, "decrypted and delivered");
    service.log(|l| {
        assert_eq!(l.received.len(), 1, "one push for one event");
        let push = &l.received[0];
        assert_eq!(push.status, 201);
        assert_eq!(push.channel_id, l.registrations[0].channel_id);
        let header = |name: &str| push.headers.get(name).map(String::as_str);
        assert_eq!(header("content-encoding"), Some("aes128gcm"));
        assert!(header("ttl").is_some_and(|t| t.parse::<u64>().is_ok()));
        assert!(header("topic").is_some(), "{:?}", push.headers);
        assert!(
            header("authorization")
                .is_some_and(|a| a.starts_with("vapid t=") && a.contains(&format!("k={vapid}"))),
            "{:?}",
            push.headers
        );
        let text = String::from_utf8_lossy(&push.body);
        assert!(!text.contains("Feuerland"), "encrypted: {text}");
    });

    // Back on a lobby page, the worker's notification is listed.
    let page = ServerPage::open(&firefox, &product.url(&format!("/server/{key}"))).await;
    page.wait_name("Feuerland").await;
    let shown = page.wait_notification(&format!("{key}:lobby-opened")).await;
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(
        (shown[0].title.as_str(), shown[0].body.as_str()),
        ("Feuerland", "The lobby is open, 1 of 4 players")
    );

    // Turned off: the browser's subscription is gone.
    page.click("[data-testid=notify-off]").await;
    page.find("[data-testid=notify-me]").await;
    until("Firefox unsubscribed", || async {
        let subscribed = page
            .eval("navigator.serviceWorker.ready.then(r => r.pushManager.getSubscription()).then(s => s !== null)")
            .await;
        if subscribed == Value::Bool(false) {
            Ok(())
        } else {
            Err(subscribed.to_string())
        }
    })
    .await;
}
