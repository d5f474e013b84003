//! The Discord status card (`docs/protocol.md` §2.6) against the real
//! bridge and its notification engine, with a stand-in on loopback that
//! speaks Discord's webhook API: a post with `?wait=true` answers the
//! message with its `id`, `PATCH …/messages/{id}` edits it (404 once it is
//! deleted), and a scripted 429 carries `retry_after` in its JSON and a
//! `Retry-After` header. The first change posts; later changes edit that
//! message, at most once per 10 s, showing the list's last state; a
//! deleted message is posted anew; a 429 is waited out.

use crate::common;

use std::time::Duration;

use common::*;
use lobby_testkit::discord::{Discord, Got};
use serde_json::{json, Value};

/// The id of the message `got` edits (it must be an edit).
fn edits(got: &Got) -> &str {
    got.edited()
        .unwrap_or_else(|| panic!("not an edit: {got:?}"))
}

fn is_post(got: &Got) -> bool {
    got.is_post()
}

const EVERY: Duration = Duration::from_secs(10);
/// How much sooner than the pacing asks a request may reach the stand-in:
/// the bridge counts from the answer, the stand-in from the request.
const SLACK: Duration = Duration::from_millis(200);

#[tokio::test]
async fn a_discord_card_is_posted_once_then_edited_in_place() {
    let product = Watching::start(Duration::from_secs(1), |c| {
        c.webhook_allow_private = true;
        c.public_url = Some("https://lobby.example".into());
    })
    .await;
    let mut discord = Discord::start().await.unwrap();
    let (status, v) = request_json(
        &product,
        "POST",
        "/api/admin/webhooks",
        json!({"url": discord.url, "format": "discord-card", "servers": "all"}),
    )
    .await;
    assert_eq!(status, 201, "{v}");
    assert_eq!(v["format"], "discord-card", "{v}");
    assert!(
        v.get("events").is_none() && v.get("cooldown").is_none(),
        "{v}"
    );

    // The first change posts, and the message's id is kept.
    let mut alpha = game_server(product.master.addr, "Alpha_*x*", 20001).await;
    let post = discord.next().await;
    assert!(is_post(&post), "{post:?}");
    let key = product.key_of("Alpha_*x*").await;
    let text = post.text();
    assert!(text.contains(r"Alpha\_\*x\*"), "markdown escaped: {text}");
    assert!(
        text.contains(&format!("(https://lobby.example/server/{key})")),
        "{text}"
    );
    assert!(text.contains("0/4 players"), "{text}");
    let first = discord.last_id();

    // The admin page's preview is the message the channel got (but its
    // time).
    let (status, preview) = request_json(
        &product,
        "POST",
        "/api/admin/webhooks/preview",
        json!({"servers": "all"}),
    )
    .await;
    assert_eq!(status, 200, "{preview}");
    let untimed = |card: &Value| {
        let mut card = card.clone();
        card["embeds"][0]["timestamp"] = Value::Null;
        card
    };
    assert_eq!(untimed(&preview), untimed(&post.body));

    // Three changes within the window: one edit of that message, after
    // the window, showing the last.
    product.stats(&mut alpha, 1, true).await;
    product.stats(&mut alpha, 2, false).await;
    product.stats(&mut alpha, 3, true).await;
    let edit = discord.next().await;
    assert_eq!(edits(&edit), first);
    assert!(
        edit.at - post.at >= EVERY - SLACK,
        "{:?}",
        edit.at - post.at
    );
    assert!(
        edit.text().contains("3/4 players · lobby open"),
        "{}",
        edit.text()
    );

    // Deleted in the channel: the edit's 404 posts a new message, whose
    // id the next edit uses. (Any other request in between, such as a
    // second edit for the changes above, fails these.)
    assert!(discord.delete(&first));
    product.stats(&mut alpha, 1, false).await;
    let lost = discord.next().await;
    assert_eq!(edits(&lost), first);
    assert!(lost.at - edit.at >= EVERY - SLACK);
    let again = discord.next().await;
    assert!(is_post(&again), "{again:?}");
    assert!(
        again.text().contains("1/4 players · in game"),
        "{}",
        again.text()
    );
    let second = discord.last_id();
    assert_ne!(second, first);

    // A 429 is waited out as asked (its JSON's `retry_after`, the longer).
    discord.answer(
        429,
        r#"{"message": "You are being rate limited.", "retry_after": 3.5, "global": false}"#,
        "1",
    );
    product.stats(&mut alpha, 2, true).await;
    let limited = discord.next().await;
    assert_eq!(edits(&limited), second);
    assert!(limited.at - again.at >= EVERY - SLACK);
    let waited = discord.next().await;
    assert_eq!(edits(&waited), second);
    assert!(
        waited.at - limited.at >= Duration::from_millis(3500) - SLACK,
        "{:?}",
        waited.at - limited.at
    );
    assert!(
        waited.text().contains("2/4 players · lobby open"),
        "{}",
        waited.text()
    );

    // The admin's list shows the card's deliveries, and the webhook is
    // active: holding edits back is no failure.
    let (_, list) = request_json(&product, "GET", "/api/admin/webhooks", Value::Null).await;
    let hook = &list["webhooks"][0];
    assert_eq!(hook["state"], "active", "{hook}");
    assert_eq!(hook["failures"], 0, "{hook}");
    drop(alpha);
    product.shutdown().await;
}

/// An admin request to the bridge; its status and JSON.
async fn request_json(product: &Watching, method: &str, path: &str, body: Value) -> (u16, Value) {
    let url = format!("http://{}{path}", product.bridge.addr);
    let mut req = product
        .http
        .request(method.parse().unwrap(), url)
        .bearer_auth(TOKEN)
        .timeout(HUNG);
    if !body.is_null() {
        req = req.body(body.to_string());
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}
