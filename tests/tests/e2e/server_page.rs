//! A server's page (`/server/{key}`) end to end: reached from its row of
//! the list without a reload, its live state following the game server's
//! TCP updates over the list's socket, its history graph filling as the
//! bridge samples (`--history-interval 1s`), its embed snippets, Back to
//! the list with its filters; with `--hide-addresses` no address; an
//! unknown key says so.

use e2e::{
    browser::Driver,
    game::{open_feuerland, GameServer, Stats},
    pages::{server::row_link, ListPage, ServerPage},
    process::http_get,
    product::Product,
    until,
};
use serde_json::Value;

fn stats(current: u32, open: bool, mode: u8) -> Stats {
    Stats {
        current,
        max: 4,
        open,
        mode,
    }
}

/// The key of the only listed server, from `/api/servers`.
fn only_key(product: &Product) -> String {
    let res = http_get(product.http, "/api/servers").expect("GET /api/servers");
    let v: Value = serde_json::from_str(&res.body).expect("JSON");
    v["servers"][0]["key"]
        .as_str()
        .unwrap_or_else(|| panic!("no key in {v}"))
        .to_owned()
}

#[tokio::test]
async fn a_row_leads_to_the_servers_live_page_and_back_keeps_the_filters() {
    let _serial = e2e::serial().await;
    let product = Product::start_with(&["--history-interval", "1s"]);
    let mut feuerland = open_feuerland(product.master);
    let _alpha = GameServer::register(
        product.master,
        "Alpha",
        "192.0.2.1",
        20001,
        stats(1, true, 1),
    );
    let driver = Driver::start();
    let browser = driver.browser().await;
    let list = ListPage::open(&browser, &product.url("/")).await;
    list.wait_rows_unordered(&["Feuerland", "Alpha"]).await;
    list.find("#filter-mode")
        .await
        .select_by_value("2")
        .await
        .expect("select mode 2");
    list.wait_rows(&["Feuerland"]).await;
    let filtered = list.search().await;
    assert!(filtered.contains("mode=2"), "{filtered}");
    list.mark_document().await;

    // The name is a link, reachable by keyboard, handled in the app.
    let link = row_link("Feuerland");
    let focused = list
        .js(&format!(
            "const a = document.querySelector({}); a.focus(); \
             return document.activeElement === a && a.getAttribute('href').startsWith('/server/');",
            e2e::browser::js_str(&link)
        ))
        .await;
    assert_eq!(focused, Value::Bool(true), "the row's link takes the focus");
    list.click(&link).await;
    let page = ServerPage::new(&browser);
    page.wait_name("Feuerland").await;
    assert!(page.same_document().await, "the link reloaded the page");
    let path = page.js("return location.pathname;").await;
    let key = only_key_of(&path);
    page.wait_state("online", "Online").await;
    page.wait_state("players", "2/4").await;
    page.wait_state("lobby", "Open").await;
    assert_eq!(page.address().await.as_deref(), Some("192.168.0.10:20000"));
    assert_eq!(
        page.js("return document.querySelectorAll('h1').length;")
            .await,
        Value::from(1)
    );
    let render_ms = page.wait_render_metric().await;

    // The graph draws the samples as they come.
    let first = page.wait_points_above("24h", 0).await;
    let summary = page.graph_summary().await;
    assert!(
        summary.starts_with("Players (average) over the last 24 hours: peak 2"),
        "{summary}"
    );

    // A stats update over TCP reaches the page over the list's socket.
    feuerland.update(stats(3, false, 2));
    page.wait_state("players", "3/4").await;
    page.wait_state("lobby", "In game").await;
    // ... and the 24 h graph takes the new samples in (its point's mean
    // rises above 2, or a new point at 3), without a reload.
    until("the 24 h graph to take in the new samples", || async {
        let s = page.graph_summary().await;
        let peak = s
            .strip_prefix("Players (average) over the last 24 hours: peak ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|p| p.parse::<f64>().ok());
        match peak {
            Some(p) if p > 2.0 => Ok(()),
            _ => Err(s),
        }
    })
    .await;
    // The hour's graph has a point every 3 s: it gains points.
    page.select_span("1h").await;
    let hour = page.wait_points_above("1h", 0).await;
    let more = page.wait_points_above("1h", hour).await;
    assert!(page.same_document().await, "the page reloaded");
    // The README's picture: the hour, with the change from 2 to 3 players.
    page.resize(1280, 1150).await;
    page.screenshot("server").await;

    // Snippets with absolute URLs on the page's origin; the badge loads.
    let origin = product.url("");
    let html = page.snippet("html").await;
    assert_eq!(
        html,
        format!(
            r#"<a href="{origin}/server/{key}"><img src="{origin}/badge/{key}.svg" alt="Feuerland"></a>"#
        )
    );
    assert!(page
        .snippet("markdown")
        .await
        .contains(&format!("({origin}/badge/{key}.svg)")));
    assert!(page
        .snippet("bbcode")
        .await
        .contains(&format!("[img]{origin}/badge/{key}.svg[/img]")));
    assert!(page
        .snippet("iframe")
        .await
        .contains(&format!("src=\"{origin}/embed/server/{key}\"")));
    until("the badge to load", || async {
        let w = page
            .js("const i = document.querySelector('[data-testid=badge]'); return i.complete ? i.naturalWidth : 0;")
            .await;
        if w.as_u64().unwrap_or(0) > 0 {
            Ok(())
        } else {
            Err(w.to_string())
        }
    })
    .await;
    page.select_span("24h").await;
    page.wait_points_above("24h", 0).await;

    // Back: the list, with its filter.
    page.js("history.back(); return null;").await;
    list.wait_rows(&["Feuerland"]).await;
    assert_eq!(list.search().await, filtered);
    assert_eq!(list.prop("#filter-mode", "value").await, Value::from("2"));
    assert!(list.same_document().await, "Back reloaded the page");
    eprintln!(
        "server page: first render {render_ms:.1} ms after its record; 24 h graph {first} point(s); \
         1 h graph {hour} then {more} points"
    );
    browser.close().await;
}

/// The key in a server page's path (`/server/{key}`).
fn only_key_of(path: &Value) -> String {
    let path = path.as_str().unwrap_or_default();
    let key = path.strip_prefix("/server/").unwrap_or_default();
    assert!(
        key.len() == 16 && key.bytes().all(|b| b.is_ascii_hexdigit()),
        "not a server page: {path}"
    );
    key.to_owned()
}

#[tokio::test]
async fn hidden_addresses_stay_hidden_and_unknown_keys_say_so() {
    let _serial = e2e::serial().await;
    let product = Product::start_with(&["--hide-addresses", "--history-interval", "1s"]);
    let _feuerland = open_feuerland(product.master);
    until("the list at /api/servers", || async {
        let body = http_get(product.http, "/api/servers").map(|r| r.body);
        match body {
            Ok(b) if b.contains("Feuerland") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let key = only_key(&product);
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page: ServerPage =
        ServerPage::open(&browser, &product.url(&format!("/server/{key}"))).await;
    page.wait_name("Feuerland").await;
    page.wait_state("players", "2/4").await;
    assert_eq!(page.address().await, None);
    let text = page.text("main").await.unwrap_or_default();
    assert!(!text.contains("192.168.0.10"), "{text}");
    assert!(page.snippet("html").await.contains(&key));

    // The compact card for iframes.
    page.open_live(&product.url(&format!("/embed/server/{key}?theme=dark")))
        .await;
    page.wait_name("Feuerland").await;
    page.wait_state("players", "2/4").await;
    assert_eq!(page.count(".site-header").await, 0);

    // A key this bridge never saw.
    page.open_live(&product.url("/server/0000000000000000"))
        .await;
    page.wait_text("[data-testid=server-missing]", "No such server")
        .await;
    browser.close().await;
}
