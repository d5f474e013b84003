//! Join links in a real browser (`docs/protocol.md` §4.12): with
//! `--join-url`, every row and the server's page show Join, whose `href` is
//! exactly the template filled with the server's address and port (an
//! IPv6 address in brackets); with `--hide-addresses` there is none.

use e2e::{
    browser::Driver,
    game::{GameServer, Stats},
    pages::{list::row, ListPage, ServerPage},
    product::Product,
};

const TEMPLATE: &str = "bomber://{address}:{port}";

fn stats(current: u32) -> Stats {
    Stats {
        current,
        max: 4,
        open: true,
        mode: 1,
    }
}

/// A server of each kind of address and what its Join link must be.
const SERVERS: [(&str, &str, u16, &str); 3] = [
    ("Alpha", "192.0.2.1", 20001, "bomber://192.0.2.1:20001"),
    (
        "Sechs",
        "2001:db8::1",
        20002,
        "bomber://[2001:db8::1]:20002",
    ),
    (
        "Named",
        "play.example.org",
        20003,
        "bomber://play.example.org:20003",
    ),
];

fn register(product: &Product) -> Vec<GameServer> {
    SERVERS
        .iter()
        .map(|(name, address, port, _)| {
            GameServer::register(product.master, name, address, *port, stats(1))
        })
        .collect()
}

#[tokio::test]
async fn join_links_are_the_filled_template_and_absent_with_hidden_addresses() {
    let _serial = e2e::serial().await;
    let product = Product::start_with(&["--join-url", TEMPLATE]);
    let _servers = register(&product);
    let driver = Driver::start();
    let browser = driver.browser().await;
    let list = ListPage::open(&browser, &product.url("/")).await;
    list.wait_rows_unordered(&["Alpha", "Sechs", "Named"]).await;
    for (name, _, _, link) in SERVERS {
        let join = format!("{} [data-testid=join]", row(name));
        list.find(&join).await;
        assert_eq!(
            list.attr(&join, "href").await.as_deref(),
            Some(link),
            "{name}"
        );
        assert_eq!(list.text(&join).await.as_deref(), Some("Join"), "{name}");
    }
    // The server's page: Join beside the address.
    let key = product.key_of("Sechs").await;
    let page: ServerPage =
        ServerPage::open(&browser, &product.url(&format!("/server/{key}"))).await;
    page.wait_name("Sechs").await;
    let join = "[data-testid=server-address] [data-testid=join]";
    page.find(join).await;
    assert_eq!(
        page.attr(join, "href").await.as_deref(),
        Some("bomber://[2001:db8::1]:20002")
    );
    // The embed's rows open the link from a new tab, not inside the frame.
    list.open_live(&product.url("/embed")).await;
    let join = format!("{} [data-testid=join]", row("Alpha"));
    list.find(&join).await;
    assert_eq!(
        list.attr(&join, "href").await.as_deref(),
        Some("bomber://192.0.2.1:20001")
    );
    assert_eq!(list.attr(&join, "target").await.as_deref(), Some("_blank"));
    browser.close().await;
    drop(product);

    // The same template with hidden addresses: no Join anywhere.
    let product = Product::start_with(&["--join-url", TEMPLATE, "--hide-addresses"]);
    let _servers = register(&product);
    let browser = driver.browser().await;
    let list = ListPage::open(&browser, &product.url("/")).await;
    list.wait_rows_unordered(&["Alpha", "Sechs", "Named"]).await;
    assert_eq!(list.count("[data-testid=join]").await, 0);
    let key = product.key_of("Alpha").await;
    let page: ServerPage =
        ServerPage::open(&browser, &product.url(&format!("/server/{key}"))).await;
    page.wait_name("Alpha").await;
    page.wait_state("players", "1/4").await;
    assert_eq!(page.count("[data-testid=join]").await, 0);
    browser.close().await;
}
