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
    browser::Driver,
    firefox::Gecko,
    game::{closed_feuerland, Stats},
    pages::{AdminPage, ServerPage},
    process::{http_get, http_get_with},
    product::{Product, ADMIN_TOKEN},
    push_service::PushService,
    until, HUNG,
};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn a_push_reaches_firefoxs_service_worker_with_no_lobby_tab_open() {
    let _serial = e2e::serial().await;
    let service = PushService::start().await;
    let product = Product::start_with(&[
        "--push-allow-insecure",
        "--push-contact",
        "mailto:ops@lobby.example",
    ]);
    let (mut feuerland, key) = closed_feuerland(&product).await;
    let vapid = http_get(product.http, "/api/push/key").expect("GET /api/push/key");
    assert_eq!(vapid.status, 200, "{}", vapid.body);
    let vapid: Value = serde_json::from_str(&vapid.body).expect("JSON");
    let vapid = vapid["publicKey"].as_str().expect("publicKey").to_owned();
    // Pushes must be signed with it, as a real service checks.
    service.trust(&vapid);

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
    // The subscription as the bridge's database holds it: when it was
    // last renewed.
    let store = bridge::db::store::Database::open(Some(&product.data_dir()))
        .map(bridge::db::store::PushStore::new)
        .expect("the bridge's database");
    let renewed = || {
        let rows = store.load().map_err(|e| e.to_string())?;
        match rows.as_slice() {
            [row] => Ok(row.updated_ms),
            rows => Err(format!("{} subscriptions", rows.len())),
        }
    };
    let made = until("the subscription stored", || async { renewed() }).await;
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

    // Back on a lobby page, the worker's notification is listed, and the
    // page renewed the subscription as it loaded.
    let page = ServerPage::open(&firefox, &product.url(&format!("/server/{key}"))).await;
    page.wait_name("Feuerland").await;
    until("the subscription renewed by the page's load", || async {
        match renewed()? {
            at if at > made => Ok(()),
            at => Err(format!("last renewed at {at}, made at {made}")),
        }
    })
    .await;
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

/// `PUT /api/push/subscription` of `body` from the loopback address
/// `from`: the answer's status.
async fn put_from(from: &str, to: std::net::SocketAddr, body: &str) -> u16 {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(format!("{from}:0").parse().expect("address"))
        .expect("bind");
    let mut stream = tokio::time::timeout(HUNG, socket.connect(to))
        .await
        .expect("connect in time")
        .expect("connect");
    let request = format!(
        "PUT /api/push/subscription HTTP/1.1\r\nHost: {to}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = String::new();
    tokio::time::timeout(HUNG, stream.read_to_string(&mut answer))
        .await
        .expect("an answer in time")
        .expect("read");
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The admin page's Web Push section: without a contact it says Web Push
/// is off and why; with one, it lists the addresses holding subscriptions
/// and deletes one's with a click.
#[tokio::test]
async fn the_admin_page_says_why_push_is_off_and_purges_an_address() {
    let _serial = e2e::serial().await;
    let driver = Driver::start();
    let browser = driver.browser().await;

    let off = Product::start();
    let admin = AdminPage::open(&browser, &off.url("/admin")).await;
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    admin
        .wait_text("[data-testid=push-off]", "no contact")
        .await;
    drop(off);

    let product = Product::start_with(&[
        "--push-allow-insecure",
        "--push-contact",
        "mailto:ops@lobby.example",
    ]);
    // RFC 8291's example browser keys, an endpoint on loopback (nothing is
    // pushed here).
    for (from, n) in [("127.0.0.5", 2), ("127.0.0.6", 1)] {
        for i in 0..n {
            let body = json!({"subscription": {
                "endpoint": format!("http://127.0.0.1:9/push/{from}-{i}"),
                "keys": {"p256dh": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
                         "auth": "BTBZMqHH6r4Tts7J_aSIgg"}}, "watches": []});
            assert_eq!(put_from(from, product.http, &body.to_string()).await, 201);
        }
    }
    let admin = AdminPage::open(&browser, &product.url("/admin")).await;
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    admin
        .wait_text("[data-testid=push-on]", "mailto:ops@lobby.example")
        .await;
    let table = admin
        .wait_text("[data-testid=push-sources]", "127.0.0.6")
        .await;
    assert!(
        table.find("127.0.0.5") < table.find("127.0.0.6"),
        "the most first: {table}"
    );
    admin
        .click("[data-testid=push-sources] tbody tr:first-child button")
        .await;
    until("127.0.0.5's subscriptions deleted", || async {
        let auth = format!("Authorization: Bearer {ADMIN_TOKEN}\r\n");
        let answer = http_get_with(product.http, "/api/admin/push", &auth)?;
        let v: Value = serde_json::from_str(&answer.body).map_err(|e| e.to_string())?;
        if v["subscriptions"] == 1 && v["sources"][0]["source"] == "127.0.0.6" {
            Ok(())
        } else {
            Err(answer.body)
        }
    })
    .await;
    // The page reads the list again: one row left, the other address's.
    admin
        .wait_eq(
            "the rows after the purge",
            "document.querySelectorAll('[data-testid=push-sources] tbody tr').length",
            json!(1),
        )
        .await;
    let after = admin
        .text("[data-testid=push-sources] tbody")
        .await
        .unwrap_or_default();
    assert!(
        after.contains("127.0.0.6") && !after.contains("127.0.0.5"),
        "{after}"
    );
}
