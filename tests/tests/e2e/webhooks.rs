//! The admin's webhooks on the admin page, end to end: the real bridge
//! (with `--webhook-allow-private`, so it may reach the receiver this test
//! runs on loopback), the Trunk-built page in headless Chromium. An admin
//! signs in, sees the bridge's 400 beside the URL field, creates a webhook,
//! sees its secret once, sends a test — which reaches the receiver signed
//! with that secret — and sees the delivery with its status in the list,
//! disables the webhook and deletes it.

use base64::{engine::general_purpose::STANDARD as BASE64, Engine as _};
use e2e::{
    browser::Driver,
    pages::{admin::webhook, AdminPage},
    process::http_get_with,
    product::{Product, ADMIN_TOKEN},
    receiver::{Received, Receiver},
};
use hmac::{Hmac, Mac};
use serde_json::Value;

/// Whether `got` carries a Standard Webhooks signature made with `secret`.
fn signed_with(got: &Received, secret: &str) -> bool {
    let key = BASE64
        .decode(secret.trim_start_matches("whsec_"))
        .expect("the secret's base64");
    let (Some(id), Some(ts), Some(sig)) = (
        got.header("webhook-id"),
        got.header("webhook-timestamp"),
        got.header("webhook-signature"),
    ) else {
        return false;
    };
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).expect("a key");
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(&got.body);
    sig == format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
}

/// `GET /api/admin/webhooks` with the admin token.
fn listed(product: &Product) -> Value {
    let auth = format!("Authorization: Bearer {ADMIN_TOKEN}\r\n");
    let answer = http_get_with(product.http, "/api/admin/webhooks", &auth).expect("the admin API");
    assert_eq!(answer.status, 200, "{}", answer.body);
    serde_json::from_str(&answer.body).expect("JSON")
}

#[tokio::test]
async fn an_admin_creates_tests_disables_and_deletes_a_webhook_on_the_page() {
    let _serial = e2e::serial().await;
    let product = Product::start_with(&["--webhook-allow-private"]);
    let mut receiver = Receiver::start().await;
    let host = receiver.host.clone();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let admin = AdminPage::open(&browser, &product.url("/admin")).await;
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    admin.find("[data-testid=no-webhooks]").await;

    // The page's own check names the field, as the bridge would.
    admin.create_webhook("ftp://example.com/").await;
    admin
        .wait_text("[data-testid=webhook-error-url]", "must be http or https")
        .await;
    // One only the bridge can refuse (no such IPv4 address): its 400,
    // beside the field it names.
    admin.create_webhook("http://999.1.1.1/hook").await;
    admin
        .wait_text("[data-testid=webhook-error-url]", "url: ")
        .await;
    assert_eq!(
        admin.attr("#webhook-url", "aria-invalid").await.as_deref(),
        Some("true")
    );

    // Created: the secret is shown, once.
    admin.create_webhook(&receiver.url).await;
    let secret = admin.webhook_secret().await;
    assert!(secret.len() > 30, "{secret}");
    admin.find(&webhook(&host)).await;
    admin
        .wait_webhook(&host, "[data-testid=webhook-state]", "active")
        .await;
    admin.click("#webhook-secret-done").await;
    admin.wait_gone("[data-testid=webhook-secret]").await;
    browser.reload_live().await;
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    admin.find(&webhook(&host)).await;
    assert_eq!(admin.count("[data-testid=webhook-secret]").await, 0);
    let first = listed(&product);
    assert!(first["webhooks"][0].get("secret").is_none(), "{first}");

    // A test: it reaches the receiver, signed with the secret the page
    // showed, and the list shows the delivery with its status.
    admin.click_on_webhook(&host, "send-test").await;
    let got = receiver.next().await;
    assert!(signed_with(&got, &secret), "signed with the shown secret");
    let body: Value = serde_json::from_slice(&got.body).expect("a JSON body");
    assert_eq!(body["type"], "test");
    assert_eq!(body["data"]["name"], "Test server");
    let shown = admin
        .wait_webhook(&host, "[data-testid=delivery-outcome]", "HTTP 204")
        .await;
    assert!(shown.contains("delivered"), "{shown}");

    // Disabled, then deleted.
    admin.click_on_webhook(&host, "toggle").await;
    admin
        .wait_webhook(&host, "[data-testid=webhook-state]", "disabled")
        .await;
    admin.wait_webhook(&host, ".toggle", "Enable").await;
    admin.click_on_webhook(&host, "delete").await;
    admin.find("[data-testid=no-webhooks]").await;
    assert_eq!(listed(&product)["webhooks"], Value::Array(Vec::new()));
    assert!(!receiver.has_more(), "nothing else was sent");
    browser.close().await;
}
