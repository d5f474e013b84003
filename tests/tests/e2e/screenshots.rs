//! The README's pictures, taken from the real product:
//!
//!     cargo test -p e2e --test e2e screenshots -- --ignored
//!
//! writes `docs/img/list.png`, `docs/img/server.png`, `docs/img/badge.svg`
//! and `docs/img/notify.png` (a server's page with "Notify me" on, as its
//! lobby opens: the page's own notice, as a browser that blocks
//! notifications shows it).
//! A day of history is written into the bridge's database first, through
//! the bridge's own store with past timestamps, so the graphs show a day
//! rather than the minute the test has run. Ignored: it rewrites files in
//! the repository and asserts nothing the other tests do not.

use std::path::Path;

use bridge::db::store::{ServerSample, Store};
use e2e::{
    browser::Driver,
    game::{GameServer, Stats},
    pages::{list::row, ServerPage},
    paths::workspace_root,
    process::http_get,
    product::Product,
    until,
};

/// The servers shown: name, address, port, players, max, lobby open, mode.
const SERVERS: &[(&str, &str, u16, u32, u8, bool, u8)] = &[
    ("Bomb Squad EU #1", "203.0.113.21", 20001, 1, 4, true, 1),
    ("Bomb Squad EU #2", "203.0.113.21", 20002, 4, 4, false, 1),
    ("Chemnitz LAN", "198.51.100.3", 22000, 3, 4, true, 2),
    ("Feuerland", "192.0.2.10", 20000, 2, 4, true, 2),
    ("Kaboom Casual", "198.51.100.24", 24000, 5, 4, false, 2),
    ("Late Night Blasts", "198.51.100.7", 21000, 0, 2, true, 1),
    ("Nordlicht", "203.0.113.88", 23000, 2, 3, true, 2),
    ("Server von Bösewicht", "203.0.113.9", 30000, 3, 3, false, 1),
    ("Training Grounds", "198.51.100.42", 25000, 1, 2, true, 1),
];

const MINUTE_MS: i64 = 60_000;

/// How busy the lobby is at `t` (0 to 1): quiet in the morning, full in
/// the evening, with a little deterministic wobble per server.
fn busy(t: i64, seed: u16) -> f64 {
    let hour = (t / MINUTE_MS / 60 % 24) as f64 + (t / MINUTE_MS % 60) as f64 / 60.0;
    let day = 0.5 - 0.5 * ((hour - 20.0) / 24.0 * std::f64::consts::TAU).cos();
    let wobble = ((t / MINUTE_MS / 5) as f64 * 0.7 + f64::from(seed)).sin() * 0.15;
    (day * 0.9 + wobble).clamp(0.0, 1.0)
}

/// Writes a sample every minute (the default interval) of the 24 hours
/// before now.
fn write_a_day(dir: &Path, keys: &[u64]) {
    let mut store = Store::open(Some(dir)).expect("open the bridge's history");
    let now = bridge::db::store::now_ms();
    let first = now - 24 * 60 * MINUTE_MS;
    for t in (first..now - 2 * MINUTE_MS).step_by(MINUTE_MS as usize) {
        let samples: Vec<ServerSample> = SERVERS
            .iter()
            .zip(keys)
            .map(|(&(name, address, port, _, max, _, mode), &key)| {
                let players = (busy(t, port) * f64::from(max)).round() as u32;
                ServerSample {
                    key,
                    name: name.into(),
                    address: Some(address.into()),
                    port: Some(port),
                    players,
                    max,
                    open: players < u32::from(max),
                    mode,
                }
            })
            .collect();
        store.record(t, &samples).expect("record a sample");
    }
}

#[tokio::test]
#[ignore = "rewrites the README's pictures in docs/img"]
async fn readme_screenshots() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let mut servers: Vec<GameServer> = SERVERS
        .iter()
        .map(|&(name, address, port, current, max, open, mode)| {
            GameServer::register(
                product.master,
                name,
                address,
                port,
                Stats {
                    current,
                    max,
                    open,
                    mode,
                },
            )
        })
        .collect();
    let mut keys = Vec::new();
    for (name, ..) in SERVERS {
        let hex = product.key_of(name).await;
        keys.push(u64::from_str_radix(&hex, 16).expect("a key is 16 hex digits"));
    }
    write_a_day(&product.data_dir(), &keys);
    let img = workspace_root().join("docs/img");

    let driver = Driver::start();
    let browser = driver.browser().await;
    // Tall enough for the lobby's graph under the list.
    browser.resize(1280, 1100).await;
    browser.open_live(&product.url("/")).await;
    browser.find(&row("Feuerland")).await;
    until("the lobby's day", || async {
        let points = browser
            .attr("[data-testid=totals-graph]", "data-points")
            .await
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(0);
        if points > 1000 {
            Ok(())
        } else {
            Err(format!("{points} points"))
        }
    })
    .await;
    let shot = browser.screenshot("readme-list").await;
    std::fs::copy(shot, img.join("list.png")).expect("docs/img/list.png");

    browser.resize(1280, 1000).await;
    let feuerland = format!("{:016x}", keys[3]);
    let page: ServerPage =
        ServerPage::open(&browser, &product.url(&format!("/server/{feuerland}"))).await;
    page.wait_name("Feuerland").await;
    page.wait_points_above("24h", 1000).await;
    let shot = browser.screenshot("readme-server").await;
    std::fs::copy(shot, img.join("server.png")).expect("docs/img/server.png");

    let badge = http_get(product.http, &format!("/badge/{feuerland}.svg")).expect("GET the badge");
    std::fs::write(img.join("badge.svg"), badge.body).expect("docs/img/badge.svg");

    // "Bomb Squad EU #2" is in game; the player asks to hear when its
    // lobby opens, and it does.
    browser
        .cdp(
            "Browser.setPermission",
            serde_json::json!({"origin": product.url(""), "permission": {"name": "notifications"},
                               "setting": "denied"}),
        )
        .await;
    let (name, _, _, _, max, _, mode) = SERVERS[1];
    let squad = format!("{:016x}", keys[1]);
    let page: ServerPage =
        ServerPage::open(&browser, &product.url(&format!("/server/{squad}"))).await;
    page.wait_name(name).await;
    page.wait_points_above("24h", 1000).await;
    page.notify_me(&["lobby-opened", "players-reached"], Some(4))
        .await;
    servers[1].update(Stats {
        current: 3,
        max,
        open: true,
        mode,
    });
    page.wait_text("[data-testid=toast]", name).await;
    let shot = browser.screenshot("readme-notify").await;
    std::fs::copy(shot, img.join("notify.png")).expect("docs/img/notify.png");
    browser.close().await;
}
