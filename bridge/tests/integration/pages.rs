//! The pages as chat apps and search engines read them (`docs/protocol.md`
//! §4.12): a plain HTTP client with no script reads the meta tags of
//! `/server/{key}`, `/` and `/embed` for names of every kind of text; the
//! 404s of keys never seen and of paths that are no page; `robots.txt`
//! and the manifest; and the Join links: `/join/{key}`'s 302, 409 and 404,
//! `joinUrl`, and the binary refusing the templates it must not take.

use crate::common;

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    path::{Path, PathBuf},
    time::Duration,
};

use common::*;
use tokio::{io::AsyncWriteExt, net::TcpStream};

/// The lobby's public address in these tests.
const PUBLIC: &str = "https://lobby.example.org";

/// The join template of these tests.
const TEMPLATE: &str = "bomber://{address}:{port}";

/// The repository's own front-end sources, as a build copies them.
fn source(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// A build's folder: the page's `index.html` (the repository's own, as
/// Trunk's input), `robots.txt`, the manifest and its icons.
fn dist() -> tempfile::TempDir {
    let dist = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &str| {
        std::fs::copy(source(from), dist.path().join(to)).unwrap_or_else(|e| panic!("{from}: {e}"));
    };
    copy("index.html", "index.html");
    std::fs::create_dir(dist.path().join("admin")).unwrap();
    copy("admin.html", "admin/index.html");
    copy("frontend/robots.txt", "robots.txt");
    copy("frontend/manifest.webmanifest", "manifest.webmanifest");
    copy("frontend/favicon.ico", "favicon.ico");
    std::fs::create_dir(dist.path().join("icons")).unwrap();
    for icon in ["icon.svg", "icon-192.png", "icon-512.png"] {
        copy(&format!("frontend/icons/{icon}"), &format!("icons/{icon}"));
    }
    dist
}

fn config(master: &TestMaster, data: &Path, dist: &Path) -> bridge::Config {
    let mut c = test_config(master.addr);
    c.data_dir = Some(data.to_owned());
    c.history_interval = Duration::from_secs(1);
    c.static_dir = dist.to_owned();
    c
}

/// A game server registered as `name` at `address:port`, listed while the
/// connection lives.
async fn register(master: &TestMaster, name: &str, address: &str, port: u16) -> TcpStream {
    let json = serde_json::json!({
        "command": "msRegisterGameServer",
        "content": {"serverName": name, "serverAddress": address, "serverPort": port},
    })
    .to_string();
    let mut s = TcpStream::connect(master.addr).await.unwrap();
    s.write_all(format!("{}{json}\n", json.len() + 1).as_bytes())
        .await
        .unwrap();
    s
}

/// An HTML document as a chat app's unfurler reads it: no script, only
/// the `<title>` and the `<meta>` tags' attributes, entities decoded.
#[derive(Debug)]
struct Unfurled {
    title: Option<String>,
    /// `property` or `name` → every `content` given for it, in order.
    meta: BTreeMap<String, Vec<String>>,
}

impl Unfurled {
    fn read(html: &str) -> Self {
        let title = html.find("<title>").and_then(|start| {
            let rest = &html[start + "<title>".len()..];
            rest.find("</title>").map(|end| decode(&rest[..end]))
        });
        let mut meta: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut rest = html;
        while let Some(at) = rest.find("<meta ") {
            rest = &rest[at + "<meta ".len()..];
            let end = rest.find('>').expect("a meta tag ends");
            let attrs = attributes(&rest[..end]);
            let name = attrs.get("property").or_else(|| attrs.get("name"));
            if let (Some(name), Some(content)) = (name, attrs.get("content")) {
                meta.entry(name.clone()).or_default().push(content.clone());
            }
        }
        Self { title, meta }
    }

    /// The one `content` of `name` (there must be exactly one).
    fn one(&self, name: &str) -> &str {
        match self.meta.get(name).map(Vec::as_slice) {
            Some([one]) => one,
            other => panic!("{name}: {other:?} in {:?}", self.meta),
        }
    }
}

/// `name="value"` pairs of a tag (the bridge quotes with `"`).
fn attributes(tag: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = tag;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq].trim().rsplit(' ').next().unwrap_or_default();
        let value_start = eq + 2;
        let value_end = rest[value_start..].find('"').expect("a closing quote") + value_start;
        out.insert(name.to_owned(), decode(&rest[value_start..value_end]));
        rest = &rest[value_end + 1..];
    }
    out
}

/// HTML's character references as the bridge writes them.
fn decode(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A page's answer: status, head and the document read as an unfurler does.
async fn unfurl(addr: SocketAddr, path: &str) -> (u16, String, String, Unfurled) {
    let (status, head, body) = http_get(addr, path, "").await;
    let html = String::from_utf8(body).expect("UTF-8 HTML");
    let unfurled = Unfurled::read(&html);
    (status, head.to_ascii_lowercase(), html, unfurled)
}

/// Names of every kind of text a server may carry.
const NAMES: [&str; 5] = [
    r#"The "Quote" & 'Apostrophe' <b>Arena</b>"#,
    "<script>alert(1)</script>",
    "שרת עברי مرحبا بكم",
    "服务器 サーバー 서버",
    "🎮 Spiel 🇩🇪 ünïcödé",
];

#[tokio::test]
async fn link_previews_carry_each_pages_facts_escaped() {
    let master = TestMaster::start().await;
    let (data, dist) = (tempfile::tempdir().unwrap(), dist());
    let mut c = config(&master, data.path(), dist.path());
    c.public_url = Some(PUBLIC.into());
    let bridge = TestBridge::embedding(&master, c).await;
    let mut games = Vec::new();
    for (n, name) in NAMES.iter().enumerate() {
        games.push(register(&master, name, "192.0.2.10", 20001 + n as u16).await);
    }
    let long = "W".repeat(100);
    games.push(register(&master, &long, "192.0.2.10", 20100).await);
    for name in NAMES.iter().copied().chain([long.as_str()]) {
        let key = key_of(&bridge, name).await;
        for path in [format!("/server/{key}"), format!("/embed/server/{key}")] {
            let (status, head, html, page) = unfurl(bridge.addr, &path).await;
            assert_eq!(status, 200, "{path}");
            assert!(
                head.contains("content-type: text/html; charset=utf-8"),
                "{head}"
            );
            assert!(head.contains("cache-control: no-cache"), "{head}");
            assert_eq!(page.title.as_deref(), Some(&*format!("{name} · Lobby")));
            assert_eq!(page.one("og:title"), name);
            assert_eq!(page.one("twitter:title"), name);
            assert_eq!(page.one("og:type"), "website");
            assert_eq!(page.one("twitter:card"), "summary_large_image");
            let state = "0/4 players, lobby open · Standard A";
            assert_eq!(page.one("description"), state);
            assert_eq!(page.one("og:description"), state);
            assert_eq!(page.one("og:url"), format!("{PUBLIC}{path}"));
            let card = format!("{PUBLIC}/card/{key}.png");
            assert_eq!(page.one("og:image"), card);
            assert_eq!(page.one("twitter:image"), card);
            // Nothing of the name is markup: its text appears only escaped.
            assert!(!html.contains("<script>alert"), "{html}");
            assert!(!html.contains("<b>Arena"), "{html}");
            assert_eq!(html.matches("<title>").count(), 1, "{html}");
            // No Join without a template.
            assert!(!page.meta.contains_key("lobby-join-url"));
            // The page itself is still the app.
            assert!(html.contains("data-trunk rel=\"rust\""), "{html}");
        }
    }
    // The lobby, and its embed: its numbers, absolute URLs.
    for (path, url) in [("/", "/"), ("/embed", "/embed"), ("/embed/", "/embed")] {
        let (status, _, _, page) = unfurl(bridge.addr, path).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(page.title.as_deref(), Some("Lobby · game servers"));
        assert_eq!(page.one("og:title"), "Lobby · game servers");
        assert!(
            page.one("og:description")
                .starts_with("6 servers online, 0 players now. "),
            "{page:?}"
        );
        assert_eq!(page.one("og:url"), format!("{PUBLIC}{url}"));
        assert_eq!(page.one("og:image"), format!("{PUBLIC}/card.png"));
    }

    // Compressed once, revalidated by its tag, and new after a change.
    let (status, head, br) = http_get(bridge.addr, "/", "Accept-Encoding: br\r\n").await;
    assert_eq!(status, 200);
    assert!(
        head.to_ascii_lowercase().contains("content-encoding: br"),
        "{head}"
    );
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut brotli::Decompressor::new(&br[..], 4096), &mut plain).unwrap();
    let (_, head, identity) = http_get(bridge.addr, "/", "").await;
    assert_eq!(plain, identity);
    let etag = lobby_testkit::http::Answer {
        status,
        head: head.clone(),
        body: Vec::new(),
    }
    .header("etag")
    .expect("an ETag")
    .to_owned();
    let (status, _, _) = http_get(bridge.addr, "/", &format!("If-None-Match: {etag}\r\n")).await;
    assert_eq!(status, 304);
    drop(games.pop());
    lobby_testkit::until("the lobby's page to say 5 servers", || async {
        let (_, _, _, page) = unfurl(bridge.addr, "/").await;
        let said = page.one("og:description").to_owned();
        if said.starts_with("5 servers online") {
            Ok(())
        } else {
            Err(said)
        }
    })
    .await;
    bridge.shutdown().await;
}

#[tokio::test]
async fn never_seen_keys_and_paths_that_are_no_page_are_404_pages() {
    let master = TestMaster::start().await;
    let (data, dist) = (tempfile::tempdir().unwrap(), dist());
    let bridge = TestBridge::embedding(&master, config(&master, data.path(), dist.path())).await;
    let _game = register(&master, "Alpha", "192.0.2.10", 20001).await;
    let key = key_of(&bridge, "Alpha").await;

    // Root-relative without --public-url.
    let (_, _, _, page) = unfurl(bridge.addr, "/").await;
    assert_eq!(page.one("og:url"), "/");
    assert_eq!(page.one("og:image"), "/card.png");
    let (_, _, _, page) = unfurl(bridge.addr, &format!("/server/{key}/")).await;
    assert_eq!(page.one("og:url"), format!("/server/{key}"));
    assert_eq!(page.one("og:image"), format!("/card/{key}.png"));

    for path in ["/server/0000000000000000", "/embed/server/0000000000000000"] {
        let (status, head, html, page) = unfurl(bridge.addr, path).await;
        assert_eq!(status, 404, "{path}");
        assert!(head.contains("content-type: text/html"), "{head}");
        assert_eq!(page.title.as_deref(), Some("No such server · Lobby"));
        assert!(page
            .one("description")
            .contains("never listed a server with this key"));
        assert_eq!(page.one("robots"), "noindex");
        assert!(!page.meta.contains_key("og:title"), "no preview");
        assert!(
            html.contains("data-trunk rel=\"rust\""),
            "the app says so too"
        );
    }
    for path in [
        "/nope",
        "/server/0123456789ABCDEF",
        "/server/",
        "/server/0123456789abcdef/x",
        "/admin/nope",
        "/frontend-0000000000000000_bg.wasm",
        "/index.htm",
        &format!("/{}", "a".repeat(300)),
    ] {
        let (status, head, _, page) = unfurl(bridge.addr, path).await;
        assert_eq!(status, 404, "{path}");
        assert!(head.contains("content-type: text/html"), "{path}: {head}");
        assert_eq!(
            page.title.as_deref(),
            Some("Page not found · Lobby"),
            "{path}"
        );
        assert_eq!(page.one("robots"), "noindex");
    }
    // Only pages are read: another method on one is refused.
    let here = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    let (status, _, _) = http_request(here, bridge.addr, "POST", "/", "").await;
    assert_eq!(status, 405);
    // The API keeps its own JSON 404.
    let (status, v) = get_json(&bridge, "/api/nope").await;
    assert_eq!(status, 404);
    assert!(v["error"].is_string(), "{v}");

    // robots.txt, the manifest and its icons, the favicon.
    let robots = lobby_testkit::http::get(bridge.addr, "/robots.txt", "")
        .await
        .unwrap();
    assert_eq!(robots.status, 200);
    assert_eq!(robots.header("content-type"), Some("text/plain"));
    let text = robots.text();
    for line in [
        "User-agent: *",
        "Allow: /",
        "Disallow: /api/",
        "Disallow: /admin",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}: {text}");
    }
    let manifest = lobby_testkit::http::get(bridge.addr, "/manifest.webmanifest", "")
        .await
        .unwrap();
    assert_eq!(manifest.status, 200);
    assert_eq!(
        manifest.header("content-type"),
        Some("application/manifest+json")
    );
    let m = manifest.json();
    assert_eq!(m["start_url"], "/", "{m}");
    assert_eq!(m["display"], "standalone", "{m}");
    for size in [192u32, 512] {
        let icon = m["icons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["sizes"] == format!("{size}x{size}"))
            .unwrap_or_else(|| panic!("no {size} icon: {m}"));
        assert_eq!(icon["type"], "image/png");
        let png = lobby_testkit::http::get(bridge.addr, icon["src"].as_str().unwrap(), "")
            .await
            .unwrap();
        assert_eq!(png.header("content-type"), Some("image/png"));
        assert_eq!(&png.body[..8], b"\x89PNG\r\n\x1a\n");
        let width = u32::from_be_bytes(png.body[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png.body[20..24].try_into().unwrap());
        assert_eq!((width, height), (size, size));
    }
    let (_, _, html, _) = unfurl(bridge.addr, "/").await;
    assert!(html.contains(r#"<link rel="manifest" href="/manifest.webmanifest" />"#));
    let favicon = lobby_testkit::http::get(bridge.addr, "/favicon.ico", "")
        .await
        .unwrap();
    assert_eq!(favicon.status, 200);
    assert_eq!(&favicon.body[..4], b"\0\0\x01\0", "an ICO file");
    bridge.shutdown().await;
}

#[tokio::test]
async fn join_redirects_while_listed_and_says_when_offline() {
    let master = TestMaster::start().await;
    let (data, dist) = (tempfile::tempdir().unwrap(), dist());
    let mut c = config(&master, data.path(), dist.path());
    c.join_url = Some(TEMPLATE.parse().unwrap());
    let bridge = TestBridge::embedding(&master, c).await;
    let name = "<script>alert('x')</script> \"Arena\"";
    let game = register(&master, name, "192.0.2.10", 20001).await;
    let _v6 = register(&master, "Six", "2001:db8::1", 20002).await;
    let key = key_of(&bridge, name).await;
    let six = key_of(&bridge, "Six").await;

    for (key, link) in [
        (&key, "bomber://192.0.2.10:20001"),
        (&six, "bomber://[2001:db8::1]:20002"),
    ] {
        let (status, head, body) = http_get(bridge.addr, &format!("/join/{key}"), "").await;
        assert_eq!(status, 302, "{head}");
        let answer = lobby_testkit::http::Answer { status, head, body };
        assert_eq!(answer.header("location"), Some(link));
        let (status, v) = get_json(&bridge, &format!("/api/servers/{key}")).await;
        assert_eq!(status, 200);
        assert_eq!(v["joinUrl"], link, "{v}");
    }
    // The page learns the template from the page the bridge sends.
    let (_, _, _, page) = unfurl(bridge.addr, &format!("/server/{key}")).await;
    assert_eq!(page.one("lobby-join-url"), TEMPLATE);
    let (_, _, _, page) = unfurl(bridge.addr, "/").await;
    assert_eq!(page.one("lobby-join-url"), TEMPLATE);
    // The admin's page too (its rows show Join), its own page otherwise.
    for path in ["/admin", "/admin/"] {
        let (status, _, html, page) = unfurl(bridge.addr, path).await;
        assert_eq!(status, 200);
        assert_eq!(page.one("lobby-join-url"), TEMPLATE, "{path}");
        assert!(html.contains("data-bin=\"admin\""), "{path}: {html}");
        assert!(!page.meta.contains_key("og:title"), "{path}");
    }

    for path in ["/join/0000000000000000", "/join/nothing", "/join/"] {
        let (status, _, _, page) = unfurl(bridge.addr, path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(page.one("robots"), "noindex", "{path}");
    }

    // Recorded, then gone from the list: 409, a page that says so.
    until_json(
        &bridge,
        &format!("/api/servers/{key}/history?range=1h"),
        |s, _, _| s == 200,
    )
    .await;
    drop(game);
    lobby_testkit::until("the server to be offline", || async {
        let (status, v) = get_json(&bridge, &format!("/api/servers/{key}")).await;
        if status == 200 && v["online"] == false {
            Ok(())
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;
    let (status, head, html, page) = unfurl(bridge.addr, &format!("/join/{key}")).await;
    assert_eq!(status, 409);
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(!head.contains("location:"), "{head}");
    assert_eq!(
        page.title.as_deref(),
        Some(&*format!("{name} is offline · Lobby"))
    );
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(html.contains(&format!("href=\"/server/{key}\"")), "{html}");
    // Its last known address still names its link.
    let (_, v) = get_json(&bridge, &format!("/api/servers/{key}")).await;
    assert_eq!(v["joinUrl"], "bomber://192.0.2.10:20001", "{v}");
    bridge.shutdown().await;
}

#[tokio::test]
async fn without_a_template_or_with_hidden_addresses_there_is_no_join() {
    let master = TestMaster::start().await;
    let dist = dist();
    let _game = register(&master, "Alpha", "192.0.2.10", 20001).await;
    for hide in [false, true] {
        let data = tempfile::tempdir().unwrap();
        let mut c = config(&master, data.path(), dist.path());
        c.hide_addresses = hide;
        c.join_url = hide.then(|| TEMPLATE.parse().unwrap());
        let bridge = TestBridge::embedding(&master, c).await;
        let key = key_of(&bridge, "Alpha").await;
        let (status, _, _, page) = unfurl(bridge.addr, &format!("/join/{key}")).await;
        assert_eq!(status, 404, "hidden: {hide}");
        assert_eq!(page.one("robots"), "noindex");
        let (_, v) = get_json(&bridge, &format!("/api/servers/{key}")).await;
        assert!(v.get("joinUrl").is_none(), "{v}");
        assert_eq!(v.get("address").is_some(), !hide, "{v}");
        for path in ["/".to_owned(), format!("/server/{key}"), "/admin".into()] {
            let (status, _, _, page) = unfurl(bridge.addr, &path).await;
            assert_eq!(status, 200);
            assert!(
                !page.meta.contains_key("lobby-join-url"),
                "{path}: {page:?}"
            );
        }
        // The admin's page is then the build's file as it is.
        let (_, _, html) = http_get(bridge.addr, "/admin", "").await;
        let built = std::fs::read(dist.path().join("admin/index.html")).unwrap();
        assert_eq!(html, built);
        bridge.shutdown().await;
    }
}

/// The binary refuses every template it must not take, before it starts,
/// naming the flag and the fault; from the environment too.
#[tokio::test]
async fn a_refused_join_template_stops_the_binary() {
    let cases = [
        (
            "javascript:alert('{address}:{port}')",
            "scheme `javascript:`",
        ),
        ("JaVaScRiPt:alert({address},{port})", "scheme `javascript:`"),
        ("data:text/html,{address}{port}", "scheme `data:`"),
        ("vbscript:msgbox({address}{port})", "scheme `vbscript:`"),
        ("FILE:///{address}/{port}", "scheme `file:`"),
        (" javascript:{address}:{port}", "printable ASCII"),
        ("\u{1}javascript:{address}:{port}", "printable ASCII"),
        ("java\tscript:{address}:{port}", "printable ASCII"),
        ("bomber://{address}", "lacks the placeholder {port}"),
        ("bomber://host:{port}", "lacks the placeholder {address}"),
        ("{address}:{port}", "must start with a scheme"),
        ("//{address}:{port}", "must start with a scheme"),
        ("bomber://{host}:{port}", "only the placeholders"),
    ];
    for (template, why) in cases {
        for by_env in [false, true] {
            let mut cmd = piped(&bridge_launch());
            cmd.env_remove("BRIDGE_JOIN_URL");
            if by_env {
                cmd.env("BRIDGE_JOIN_URL", template);
            } else {
                cmd.args(["--join-url", template]);
            }
            let out = bounded("the refusing bridge", cmd.output()).await.unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{template:?}: {stderr}");
            assert!(stderr.contains("--join-url"), "{template:?}: {stderr}");
            assert!(stderr.contains(why), "{template:?}: {stderr}");
            assert!(out.stdout.is_empty(), "it never started listening");
        }
    }
}

/// A page that must be written (a key after key never seen, each a look
/// into the database) is paid from the client address's budget like an
/// `/api/` answer: after the burst, `429` without work, while another
/// address is served.
#[tokio::test]
async fn pages_written_for_a_client_are_paid_from_its_budget() {
    let master = TestMaster::start().await;
    let (data, dist) = (tempfile::tempdir().unwrap(), dist());
    let mut c = config(&master, data.path(), dist.path());
    c.api_rate_per_sec = 1;
    c.api_burst = 3;
    let bridge = TestBridge::embedding(&master, c).await;
    let a: std::net::IpAddr = "127.0.0.1".parse().unwrap();
    let started = std::time::Instant::now();
    let mut statuses = Vec::new();
    for n in 0..20u64 {
        let path = format!("/server/{n:016x}");
        let (status, head, _) = http_request(a, bridge.addr, "GET", &path, "").await;
        if status == 429 {
            assert!(
                head.to_ascii_lowercase().contains("retry-after: 1"),
                "{head}"
            );
        }
        statuses.push(status);
    }
    let served = statuses.iter().filter(|s| **s == 404).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(served + refused, 20, "{statuses:?}");
    // The burst, and at most one more per second that passed.
    let allowed = 3 + started.elapsed().as_secs() as usize + 1;
    assert!(served <= allowed, "{served} served of {statuses:?}");
    assert!(refused > 0, "{statuses:?}");
    let b: std::net::IpAddr = "127.0.0.2".parse().unwrap();
    let (status, _, _) = http_request(b, bridge.addr, "GET", "/server/00000000000000ff", "").await;
    assert_eq!(status, 404, "another address is served");
    bridge.shutdown().await;
}
