//! Other games' servers end to end: fake A2S and GameAgent servers on
//! 127.0.0.1 (`gamequery::fake`, replaying the seeds' packets), the real
//! bridge querying them over UDP, and the front end's source tabs, game
//! table, detail view and embed in headless Chromium.
//!
//! What the page must show is decoded from the same seed packets the fakes
//! send, never typed in by hand. Each test holds [`e2e::serial`];
//! screenshots go to `target/e2e-screenshots/`.

use std::{
    net::{Ipv4Addr, SocketAddrV4},
    time::Duration,
};

use e2e::{
    browser::{count_expr, js_str, param_expr, Browser, Driver},
    game::{open_feuerland, GameServer, Stats},
    pages::{
        games::{clock, tab, DETAIL_PLAYERS, DETAIL_RULES, ONLINE, ONLINE_ROWS, ROWS, TABS},
        GamesPage, ListPage,
    },
    product::Product,
};
use gamequery::{
    a2s,
    fake::{self, A2sServer, GameAgentMaster, GameAgentServer},
    gameagent::{Player, Status},
    packet::{self, Datagram},
    QueryError,
};
use serde_json::{json, Value};

/// `--game-query-retries` below: attempts per query are one more.
const RETRIES: u32 = 1;

/// The reply inside a single (`-1`) packet.
fn single(packet: &[u8]) -> Vec<u8> {
    match packet::classify(packet) {
        Ok(Datagram::Single(reply)) => reply.to_vec(),
        other => panic!("not a single packet: {other:?}"),
    }
}

fn status(name: &str, level: &str, game_type: &str, players: u32, max: u32) -> Status {
    Status {
        players,
        max_players: max,
        level: level.into(),
        game_type: game_type.into(),
        version: "1.10".into(),
        game_name: "serioussamse".into(),
        session_name: name.into(),
        keys: vec![],
    }
}

fn player(index: u32, name: &str, frags: i32, ping: u32) -> Player {
    Player {
        index,
        name: Some(name.into()),
        frags,
        ping,
    }
}

/// Every fake the bridge queries.
struct Fakes {
    a2s: A2sServer,
    master: GameAgentMaster,
    /// A master that never answers: its tab shows the error.
    silent: GameAgentMaster,
    /// Listed by `master`, by name: Awesome Server (3/16), Cooperative
    /// Karnak (1/8), Full House (4/4), Empty Arena (0/8).
    servers: Vec<GameAgentServer>,
    /// Listed by `master` but never answers.
    gone: GameAgentServer,
}

impl Fakes {
    async fn start() -> Fakes {
        let a2s = A2sServer::start().await.expect("fake A2S server");
        let awesome = GameAgentServer::start(
            status("Awesome Server", "Yodeller", "Fragmatch", 3, 16),
            vec![
                player(0, "Angelo", 14, 80),
                player(1, "Bärbel", 3, 45),
                player(4, "Zed", -2, 120),
            ],
        );
        let karnak = GameAgentServer::start(
            status("Cooperative Karnak", "Karnak", "Cooperative", 1, 8),
            vec![player(0, "Solo", 7, 30)],
        );
        let full = GameAgentServer::start(
            status("Full House", "Sierra de Chiapas", "Fragmatch", 4, 4),
            (0..4).map(|i| player(i, &format!("P{i}"), 0, 50)).collect(),
        );
        let empty = GameAgentServer::start(
            status("Empty Arena", "Valley of the Jaguar", "Fragmatch", 0, 8),
            vec![],
        );
        let gone = GameAgentServer::start(status("Gone", "Gone", "Gone", 0, 8), vec![]);
        let (awesome, karnak, full, empty, gone) = tokio::join!(awesome, karnak, full, empty, gone);
        let servers: Vec<GameAgentServer> = [awesome, karnak, full, empty]
            .into_iter()
            .map(|s| s.expect("fake GameAgent server"))
            .collect();
        let gone = gone.expect("fake GameAgent server");
        gone.set_answering(false);
        let mut listed: Vec<_> = servers.iter().map(GameAgentServer::game_addr).collect();
        listed.insert(2, gone.game_addr());
        let master = GameAgentMaster::start(listed)
            .await
            .expect("fake GameAgent master");
        let silent = silent_master().await;
        Fakes {
            a2s,
            master,
            silent,
            servers,
            gone,
        }
    }

    fn a2s_id(&self) -> String {
        format!("a2s:{}", self.a2s.addr())
    }

    fn master_id(&self) -> String {
        format!("gameagent:{}", self.master.addr())
    }

    fn silent_id(&self) -> String {
        format!("gameagent:{}", self.silent.addr())
    }

    /// The bridge with these sources, polled every second.
    fn product(&self) -> Product {
        let retries = RETRIES.to_string();
        Product::start_with(&[
            "--a2s",
            &self.a2s.addr().to_string(),
            "--gameagent-master",
            &self.master.addr().to_string(),
            "--gameagent-master",
            &self.silent.addr().to_string(),
            "--game-poll-interval",
            "1s",
            "--game-query-timeout",
            "300ms",
            "--game-query-retries",
            &retries,
            // The fakes are on 127.0.0.1, which a master may list only when
            // private addresses are allowed.
            "--game-allow-private",
        ])
    }
}

/// The fakes, a bridge querying them with one lobby server registered
/// ("Feuerland"), and a browser.
struct Scene {
    fakes: Fakes,
    product: Product,
    _feuerland: GameServer,
    // Field order: the browser goes before its driver.
    browser: Browser,
    _driver: Driver,
}

impl Scene {
    async fn start() -> Scene {
        let fakes = Fakes::start().await;
        let product = fakes.product();
        let feuerland = open_feuerland(product.master);
        let driver = Driver::start();
        let browser = driver.browser().await;
        Scene {
            fakes,
            product,
            _feuerland: feuerland,
            browser,
            _driver: driver,
        }
    }

    fn page(&self) -> GamesPage<'_> {
        GamesPage::new(&self.browser)
    }

    /// Opens `/` and waits for the tab bar: the lobby's own list first and
    /// selected, then one tab per source in the configured order.
    async fn open_with_tabs(&self) {
        let (b, fakes) = (&self.page(), &self.fakes);
        b.open_live(&self.product.url("/")).await;
        b.wait_eq(
            "the source tabs",
            TABS,
            json!([
                ["lobby", "true"],
                [fakes.a2s_id(), "false"],
                [fakes.master_id(), "false"],
                [fakes.silent_id(), "false"]
            ]),
        )
        .await;
        ListPage::new(b).wait_rows(&["Feuerland"]).await;
        assert_eq!(b.param("src").await, Value::Null);
    }
}

/// The GameAgent master's online servers by name.
const BY_NAME: [&str; 4] = [
    "Awesome Server",
    "Cooperative Karnak",
    "Empty Arena",
    "Full House",
];
/// The same by players, most first.
const BY_PLAYERS: [&str; 4] = [
    "Full House",
    "Awesome Server",
    "Cooperative Karnak",
    "Empty Arena",
];

/// What the fake A2S server says, decoded from the packets it sends.
struct A2sSeed {
    info: a2s::Info,
    players: Vec<a2s::Player>,
    rules: Vec<a2s::Rule>,
    /// Its game address, as the page names it.
    server: String,
}

impl A2sSeed {
    fn decode(fakes: &Fakes) -> A2sSeed {
        let info = a2s::decode_info(&single(&fake::cs_source_info())).expect("seed info");
        let players =
            a2s::decode_players(&single(&fake::cs_source_players()), false).expect("seed players");
        let rules = a2s::decode_rules(&single(&fake::cs_source_rules())).expect("seed rules");
        assert!(!players.is_empty() && !rules.is_empty());
        let port = info.port.unwrap_or(fakes.a2s.addr().port());
        A2sSeed {
            info,
            players,
            rules,
            server: format!("127.0.0.1:{port}"),
        }
    }
}

/// The keyboard as in WAI-ARIA tabs: only the selected tab (the A2S one)
/// is in the Tab order; arrows, End and Home select another tab and focus
/// it, and `src=` follows.
async fn tabs_follow_the_keyboard(b: &GamesPage<'_>, fakes: &Fakes) {
    assert_eq!(
        b.eval(
            "Array.from(document.querySelectorAll('[data-testid=source-tab]'))\
             .filter(t => t.tabIndex === 0).map(t => t.dataset.source)"
        )
        .await,
        json!([fakes.a2s_id()])
    );
    b.js(&format!(
        "document.querySelector({}).focus()",
        js_str(&tab(&fakes.a2s_id()))
    ))
    .await;
    for (key, to) in [
        ("\u{E014}", fakes.master_id()),  // ArrowRight
        ("\u{E010}", fakes.silent_id()),  // End
        ("\u{E011}", "lobby".to_owned()), // Home
        ("\u{E012}", fakes.silent_id()),  // ArrowLeft wraps around
        ("\u{E011}", "lobby".to_owned()),
        ("\u{E014}", fakes.a2s_id()),
    ] {
        let focused = "document.activeElement";
        b.find(":focus")
            .await
            .send_keys(key)
            .await
            .expect("send a key");
        let expr = format!(
            "[{focused}.dataset.source, {focused}.getAttribute('aria-selected'), {}]",
            param_expr("src")
        );
        let src = if to == "lobby" {
            json!(null)
        } else {
            json!(to)
        };
        b.wait_eq(
            &format!("the {to} tab focused"),
            &expr,
            json!([to, "true", src]),
        )
        .await;
    }
}

/// The A2S tab's one row shows the seed server's map, game, players and
/// address, and a summary; the lobby-only filters are not offered.
async fn a2s_row_shows_the_seed(b: &GamesPage<'_>, seed: &A2sSeed) {
    let info = &seed.info;
    assert_eq!(b.count("[data-testid=server-row]").await, 0);
    assert_eq!(b.eval(ONLINE_ROWS).await, json!([info.name]));
    assert_eq!(b.cell(&info.name, ".c-map").await, json!(info.map));
    assert_eq!(b.cell(&info.name, ".c-game").await, json!(info.game));
    let players_cell = b.wait_cell(&info.name, ".c-players", |_| true).await;
    let current_max = format!("{}/{}", info.players, info.max_players);
    assert!(
        players_cell.starts_with(&current_max),
        "{players_cell:?} does not start with {current_max}"
    );
    let addr_cell = b.wait_cell(&info.name, ".c-addr", |_| true).await;
    assert!(addr_cell.contains(&seed.server), "{addr_cell:?}");
    b.wait_text(
        "[data-testid=summary]",
        &format!("1 server · {} players · 1 online", info.players),
    )
    .await;
    assert_eq!(b.count("#filter-open, #filter-mode").await, 0);
}

/// The seed's players sorted by name, as the detail view lists them.
fn sorted_players(seed: &A2sSeed) -> Value {
    let mut names: Vec<&str> = seed.players.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    json!(names)
}

/// The A2S server's details: the players with score and time, every rule.
async fn a2s_detail_shows_players_and_rules(b: &GamesPage<'_>, fakes: &Fakes, seed: &A2sSeed) {
    let name = &seed.info.name;
    b.open_detail(name).await;
    b.wait_text("[data-testid=game-detail] h2", name).await;
    assert_eq!(b.count("table.games").await, 0);
    assert_eq!(b.param("server").await, json!(seed.server));
    assert_eq!(b.param("src").await, json!(fakes.a2s_id()));
    b.wait_eq("the A2S players", DETAIL_PLAYERS, sorted_players(seed))
        .await;
    for p in &seed.players {
        assert_eq!(
            b.detail_cell("detail-player", &p.name, ".c-score").await,
            json!(p.score.to_string()),
            "score of {:?}",
            p.name
        );
        assert_eq!(
            b.detail_cell("detail-player", &p.name, ".c-time").await,
            json!(clock(p.duration as u32)),
            "time of {:?} ({} s)",
            p.name,
            p.duration
        );
    }
    assert_eq!(
        b.count("tr[data-testid=detail-rule]").await,
        seed.rules.len() as u64
    );
    let rule = the_rule(seed);
    assert_eq!(
        b.detail_cell("detail-rule", &rule.name, ".c-value").await,
        json!(rule.value),
        "rule {}",
        rule.name
    );
}

/// The rule the tests look for: `sv_gravity`, else the last.
fn the_rule(seed: &A2sSeed) -> &a2s::Rule {
    seed.rules
        .iter()
        .find(|r| r.name == "sv_gravity")
        .or(seed.rules.last())
        .expect("a rule")
}

/// The rule filter narrows the rules to the ones that mention it, says
/// when none does, and shows all again once emptied.
async fn the_rule_filter_narrows_the_rules(b: &GamesPage<'_>, seed: &A2sSeed) {
    let rule = the_rule(seed);
    let needle = &rule.name[rule.name.len().saturating_sub(5)..];
    let expected: Vec<&str> = seed
        .rules
        .iter()
        .filter(|r| {
            r.name.to_lowercase().contains(&needle.to_lowercase())
                || r.value.to_lowercase().contains(&needle.to_lowercase())
        })
        .map(|r| r.name.as_str())
        .collect();
    assert!(
        expected.len() < seed.rules.len(),
        "{needle:?} filters nothing"
    );
    b.type_into("#rule-filter", &needle.to_uppercase()).await;
    b.wait_eq("the filtered rules", DETAIL_RULES, json!(expected))
        .await;
    let nothing = "no rule has this";
    b.type_into("#rule-filter", nothing).await;
    b.wait_text("[data-testid=no-rules]", "Nothing matches")
        .await;
    // Backspaces, as a user empties it (WebDriver's clear fires no input).
    b.find("#rule-filter")
        .await
        .send_keys(&"\u{E003}".repeat(nothing.len()))
        .await
        .expect("backspaces");
    b.wait_eq(
        "all rules again",
        &count_expr("tr[data-testid=detail-rule]"),
        json!(seed.rules.len()),
    )
    .await;
}

/// The open detail survives a reload; closing it drops `server=` and shows
/// the table again.
async fn the_detail_survives_a_reload_and_closes(b: &GamesPage<'_>, fakes: &Fakes, seed: &A2sSeed) {
    let name = &seed.info.name;
    let url = b.search().await;
    b.reload_live().await;
    b.wait_text("[data-testid=game-detail] h2", name).await;
    b.wait_eq(
        "the A2S players after a reload",
        DETAIL_PLAYERS,
        sorted_players(seed),
    )
    .await;
    assert_eq!(b.search().await, url);

    b.click("#detail-close").await;
    b.wait_eq("the table back", ROWS, json!([name])).await;
    assert_eq!(b.param("server").await, Value::Null);
    assert_eq!(b.param("src").await, json!(fakes.a2s_id()));
    assert_eq!(b.count("[data-testid=game-detail]").await, 0);
}

/// Live changes: the server switches maps and the row follows unreloaded;
/// it goes down and its row stays, offline, named by its address; it comes
/// back.
async fn the_a2s_row_follows_the_server(b: &GamesPage<'_>, fakes: &Fakes, seed: &A2sSeed) {
    let name = &seed.info.name;
    b.mark_document().await;
    fakes.a2s.set_alternate_map(true);
    b.wait_cell(name, ".c-map", |t| t == fake::ALTERNATE_MAP)
        .await;
    assert!(b.same_document().await, "the page reloaded");

    fakes.a2s.set_answering(false);
    b.wait_eq("the A2S server offline", ONLINE, json!(["false"]))
        .await;
    let name_cell = b
        .text("tr[data-testid=game-row] .c-name")
        .await
        .unwrap_or_default();
    assert!(name_cell.contains("127.0.0.1"), "{name_cell:?}");
    b.wait_text("[data-testid=summary]", "1 server · 0 players · 0 online")
        .await;
    b.screenshot("games-a2s-offline").await;

    fakes.a2s.set_answering(true);
    b.wait_eq("the A2S server back", ONLINE_ROWS, json!([name]))
        .await;
    assert!(b.same_document().await, "the page reloaded");
}

// Multi-threaded (all three): the fakes answer from the runtime's workers
// even while the test thread blocks in the harness (starting processes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2s_tab_shows_the_seed_server_its_details_and_live_changes() {
    let _serial = e2e::serial().await;
    let scene = Scene::start().await;
    let (b, fakes) = (&scene.page(), &scene.fakes);
    let seed = A2sSeed::decode(fakes);
    scene.open_with_tabs().await;
    b.mark_document().await;

    b.select_tab(&fakes.a2s_id()).await;
    b.wait_eq("the A2S rows", ROWS, json!([seed.info.name]))
        .await;
    assert_eq!(b.param("src").await, json!(fakes.a2s_id()));
    assert_eq!(
        b.tab_selected(&fakes.a2s_id()).await.as_deref(),
        Some("true")
    );
    assert_eq!(b.tab_selected("lobby").await.as_deref(), Some("false"));
    tabs_follow_the_keyboard(b, fakes).await;

    a2s_row_shows_the_seed(b, &seed).await;
    b.screenshot("games-a2s-table").await;
    a2s_detail_shows_players_and_rules(b, fakes, &seed).await;
    b.screenshot("games-a2s-detail").await;
    the_rule_filter_narrows_the_rules(b, &seed).await;
    the_detail_survives_a_reload_and_closes(b, fakes, &seed).await;
    the_a2s_row_follows_the_server(b, fakes, &seed).await;
    scene.browser.close().await;
}

/// The GameAgent master's tab: its servers by name, the one that does not
/// answer offline and named by its address, the cells of Awesome Server,
/// and the summary.
async fn gameagent_table_lists_the_masters_servers(b: &GamesPage<'_>, fakes: &Fakes) {
    let gone_addr = fakes.gone.game_addr().to_string();
    b.select_tab(&fakes.master_id()).await;
    b.wait_eq("the GameAgent servers by name", ONLINE_ROWS, json!(BY_NAME))
        .await;
    assert_eq!(
        b.tab_selected(&fakes.master_id()).await.as_deref(),
        Some("true")
    );
    assert_eq!(b.param("src").await, json!(fakes.master_id()));
    assert_eq!(b.count("tr[data-testid=game-row]").await, 5);
    let offline = "tr[data-testid=game-row][data-online=false]";
    assert_eq!(b.count(offline).await, 1);
    let offline_name = b
        .text(&format!("{offline} .c-name"))
        .await
        .unwrap_or_default();
    assert!(
        offline_name.contains("127.0.0.1"),
        "{offline_name:?} (expected the address {gone_addr})"
    );
    let awesome_addr = fakes.servers[0].game_addr().to_string();
    for (class, expected) in [(".c-game", "serioussamse"), (".c-map", "Yodeller")] {
        assert_eq!(
            b.cell("Awesome Server", class).await,
            json!(expected),
            "{class}"
        );
    }
    let players_cell = b.wait_cell("Awesome Server", ".c-players", |_| true).await;
    assert!(players_cell.starts_with("3/16"), "{players_cell:?}");
    let addr_cell = b.wait_cell("Awesome Server", ".c-addr", |_| true).await;
    assert!(addr_cell.contains(&awesome_addr), "{addr_cell:?}");
    b.wait_text("[data-testid=summary]", "5 servers · 8 players · 4 online")
        .await;
}

/// Sorting: players most first, then fewest first, then by map; the
/// headers' aria-sort and the URL follow.
async fn gameagent_table_sorts(b: &GamesPage<'_>) {
    b.sort_by("players").await;
    b.wait_eq("sorted by players", ONLINE_ROWS, json!(BY_PLAYERS))
        .await;
    assert_eq!(b.aria_sort("players").await.as_deref(), Some("descending"));
    assert_eq!(b.param("sort").await, json!("players"));
    // Descending is the players column's own direction: `dir` may be left out.
    let dir = b.param("dir").await;
    assert!(dir.is_null() || dir == json!("desc"), "dir={dir}");
    b.sort_by("players").await;
    let mut fewest = BY_PLAYERS;
    fewest.reverse();
    b.wait_eq(
        "sorted by players, fewest first",
        ONLINE_ROWS,
        json!(fewest),
    )
    .await;
    assert_eq!(b.aria_sort("players").await.as_deref(), Some("ascending"));
    assert_eq!(b.param("dir").await, json!("asc"));
    b.sort_by("map").await;
    // Karnak, Sierra de Chiapas, Valley of the Jaguar, Yodeller.
    let by_map = [
        "Cooperative Karnak",
        "Full House",
        "Empty Arena",
        "Awesome Server",
    ];
    b.wait_eq("sorted by map", ONLINE_ROWS, json!(by_map)).await;
    assert_eq!(b.aria_sort("map").await.as_deref(), Some("ascending"));
    assert_eq!(b.aria_sort("players").await.as_deref(), Some("none"));
    assert_eq!(b.param("sort").await, json!("map"));
}

/// Filters and search (by map and by name), in the URL; a reload
/// reproduces the view.
async fn gameagent_table_filters_searches_and_reloads(b: &GamesPage<'_>, fakes: &Fakes) {
    b.click("#filter-hide-full").await;
    b.wait_eq(
        "full servers hidden",
        ONLINE_ROWS,
        json!(["Cooperative Karnak", "Empty Arena", "Awesome Server"]),
    )
    .await;
    b.click("#filter-hide-empty").await;
    b.wait_eq(
        "empty servers hidden",
        ONLINE_ROWS,
        json!(["Cooperative Karnak", "Awesome Server"]),
    )
    .await;
    // Search covers the map ("yodel") ...
    b.type_into("#search", "YODEL").await;
    b.wait_eq("search by map", ROWS, json!(["Awesome Server"]))
        .await;
    // ... and the name.
    b.type_into("#search", "karnak").await;
    b.wait_eq("search by name", ROWS, json!(["Cooperative Karnak"]))
        .await;
    for (key, value) in [
        ("src", fakes.master_id()),
        ("sort", "map".to_owned()),
        ("q", "karnak".to_owned()),
        ("hidefull", "1".to_owned()),
        ("hideempty", "1".to_owned()),
    ] {
        assert_eq!(b.param(key).await, json!(value), "{key}");
    }

    let url = b.search().await;
    b.reload_live().await;
    b.wait_eq(
        "the view after a reload",
        ROWS,
        json!(["Cooperative Karnak"]),
    )
    .await;
    assert_eq!(b.search().await, url);
    assert_eq!(b.prop("#search", "value").await, json!("karnak"));
    assert_eq!(b.prop("#filter-hide-full", "checked").await, json!(true));
    assert_eq!(b.prop("#filter-hide-empty", "checked").await, json!(true));
    assert_eq!(
        b.tab_selected(&fakes.master_id()).await.as_deref(),
        Some("true")
    );
    assert_eq!(b.aria_sort("map").await.as_deref(), Some("ascending"));
}

/// The details of a GameAgent server: players with frags and ping, its
/// status keys as rules; closing them drops `server=`.
async fn gameagent_detail_shows_players_and_rules(
    b: &GamesPage<'_>,
    fakes: &Fakes,
    product: &Product,
) {
    let awesome_addr = fakes.servers[0].game_addr().to_string();
    b.open_live(&product.url(&format!("/?src={}", fakes.master_id())))
        .await;
    b.wait_eq("the GameAgent servers", ONLINE_ROWS, json!(BY_NAME))
        .await;
    b.open_detail("Awesome Server").await;
    b.wait_text("[data-testid=game-detail] h2", "Awesome Server")
        .await;
    assert_eq!(b.param("server").await, json!(awesome_addr));
    b.wait_eq(
        "the GameAgent players",
        DETAIL_PLAYERS,
        json!(["Angelo", "Bärbel", "Zed"]),
    )
    .await;
    for (name, score, ping) in [("Angelo", "14", "80"), ("Zed", "-2", "120")] {
        assert_eq!(
            b.detail_cell("detail-player", name, ".c-score").await,
            json!(score),
            "score of {name}"
        );
        let shown = b.detail_cell("detail-player", name, ".c-ping").await;
        assert!(
            shown.as_str().is_some_and(|t| t.contains(ping)),
            "ping of {name}: {shown}"
        );
    }
    for (rule, value) in [("gametype", "Fragmatch"), ("level", "Yodeller")] {
        assert_eq!(
            b.detail_cell("detail-rule", rule, ".c-value").await,
            json!(value),
            "rule {rule}"
        );
    }
    b.screenshot("games-gameagent-detail").await;
    b.click("#detail-close").await;
    b.wait_eq("the table back", ONLINE_ROWS, json!(BY_NAME))
        .await;
    assert_eq!(b.param("server").await, Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gameagent_tab_sorts_filters_details_offline_servers_and_source_errors() {
    let _serial = e2e::serial().await;
    let scene = Scene::start().await;
    let (b, fakes, product) = (&scene.page(), &scene.fakes, &scene.product);
    scene.open_with_tabs().await;

    gameagent_table_lists_the_masters_servers(b, fakes).await;
    b.screenshot("games-gameagent-table").await;
    gameagent_table_sorts(b).await;
    gameagent_table_filters_searches_and_reloads(b, fakes).await;
    gameagent_detail_shows_players_and_rules(b, fakes, product).await;

    // The silent master's tab: the source's error.
    b.select_tab(&fakes.silent_id()).await;
    let error = QueryError::Timeout {
        addr: fakes.silent.addr(),
        attempts: RETRIES + 1,
    }
    .to_string();
    b.wait_text("[data-testid=source-error]", &error).await;
    assert_eq!(b.count("tr[data-testid=game-row]").await, 0);
    b.screenshot("games-source-error").await;

    // Back to the lobby's own list.
    b.select_tab("lobby").await;
    ListPage::new(b).wait_rows(&["Feuerland"]).await;
    assert_eq!(b.param("src").await, Value::Null);
    assert_eq!(b.tab_selected("lobby").await.as_deref(), Some("true"));
    assert_eq!(b.count("table.games").await, 0);
    scene.browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embed_shows_a_sources_game_table() {
    let _serial = e2e::serial().await;
    let scene = Scene::start().await;
    let (b, fakes, product) = (&scene.page(), &scene.fakes, &scene.product);
    b.resize(800, 600).await;
    let embed = format!("/embed?src={}&sort=players", fakes.master_id());
    b.open_live(&product.url(&embed)).await;
    b.wait_eq("the embedded table", ONLINE_ROWS, json!(BY_PLAYERS))
        .await;
    assert_eq!(b.count("table.games").await, 1);
    assert_eq!(b.count("[data-testid=server-row]").await, 0);
    b.screenshot("games-embed").await;
    scene.browser.close().await;
}

/// The bridge as shipped (no `--game-allow-private`): a master listing the
/// bridge's own loopback gets none of it queried and its tab says why; a
/// master that never answers is cut off by `--game-refresh-deadline`
/// although one query may take 30 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_and_silent_masters_neither_aim_nor_stall_the_bridge() {
    let _serial = e2e::serial().await;
    let target = GameAgentServer::start(status("Internal", "Yodeller", "Fragmatch", 1, 8), vec![])
        .await
        .expect("fake GameAgent server");
    let hostile = GameAgentMaster::start(vec![
        target.game_addr(),
        target.game_addr(),
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, u16::MAX),
    ])
    .await
    .expect("fake GameAgent master");
    let silent = silent_master().await;
    let product = Product::start_with(&[
        "--gameagent-master",
        &hostile.addr().to_string(),
        "--gameagent-master",
        &silent.addr().to_string(),
        "--game-poll-interval",
        "1s",
        "--game-query-timeout",
        "30s",
        "--game-query-retries",
        "0",
        "--game-refresh-deadline",
        "1s",
    ]);
    let driver = Driver::start();
    let browser = driver.browser().await;
    let hostile_id = format!("gameagent:{}", hostile.addr());
    let b = GamesPage::open(&browser, &product.url(&format!("/?src={hostile_id}"))).await;
    b.wait_text(
        "[data-testid=source-note]",
        "3 listed servers skipped: 2 private or reserved addresses, 1 with port 0 or 65535",
    )
    .await;
    // A note, not a failure: no error banner.
    assert_eq!(b.count("[data-testid=source-error]").await, 0);
    assert_eq!(b.count("tr[data-testid=game-row]").await, 0);
    assert!(hostile.udp().requests() >= 1, "the master was asked");
    assert_eq!(
        target.udp().requests(),
        0,
        "a listed loopback server was queried"
    );
    b.screenshot("games-hostile-master").await;

    b.select_tab(&format!("gameagent:{}", silent.addr())).await;
    b.wait_text("[data-testid=source-error]", "no answer in time")
        .await;
    browser.close().await;
}

/// A fake GameAgent master that never answers: the source a page
/// shows as failing.
pub(crate) async fn silent_master() -> GameAgentMaster {
    let silent = GameAgentMaster::start(vec![])
        .await
        .expect("fake GameAgent master");
    silent.set_answering(false);
    silent
}

#[tokio::test]
async fn lobby_without_sources_has_no_tab_bar() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::open(&browser, &product.url("/")).await;
    page.wait_empty().await;
    // A list that changes after the page subscribed: whatever the bridge
    // sent the page before it (games come right after the list at a
    // subscribe) has been dealt with once the change shows.
    let _later = GameServer::register(
        product.master,
        "Later",
        "192.168.0.10",
        20001,
        Stats {
            current: 1,
            max: 4,
            open: true,
            mode: 2,
        },
    );
    page.wait_rows(&["Later"]).await;
    assert_eq!(page.count("[data-testid=source-tab]").await, 0);
    assert_eq!(page.count("table.games").await, 0);
    browser.close().await;
}

/// A zero refresh deadline would mark every server offline: the bridge
/// refuses it at start, saying why.
#[tokio::test]
async fn a_zero_refresh_deadline_is_refused_at_start() {
    let launch = lobby_testkit::launch::BridgeLaunch {
        args: vec!["--game-refresh-deadline".into(), "0".into()],
        ..lobby_testkit::launch::BridgeLaunch::plain(e2e::paths::binary("bridge"))
    };
    let child = tokio::process::Command::from(launch.command())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run the bridge");
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("the bridge started instead of refusing the deadline")
        .expect("wait for the bridge");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "started: {stderr}");
    assert!(
        stderr.contains("--game-refresh-deadline") && stderr.contains("must be greater than zero"),
        "{stderr}"
    );
}
