//! The front end's own defences (SECURITY.md, "Front end"), in Chromium:
//! a link that names another bridge (`?bridge=`) never gets it the admin
//! token, the admin link the bridge prints signs in and leaves the address
//! bar without the token, and a name with a bidi override is isolated.
//!
//! Holds [`e2e::serial`] like the other browser tests.

use std::{
    net::SocketAddr,
    process::Command,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use e2e::{
    browser::{Browser, Driver, PAGE_READY},
    game::{GameServer, Stats},
    holds_for,
    lobby::{Lobby, ADMIN_TOKEN},
    paths,
    process::Proc,
    wait_for,
};
use futures_util::StreamExt;
use gamequery::{
    fake::{GameAgentMaster, GameAgentServer},
    gameagent::{Player, Status},
};
use tokio::{net::TcpListener, runtime::Runtime};
use tokio_tungstenite::tungstenite::{
    handshake::server::{Request, Response},
    Message,
};

/// How long a foreign bridge is watched for a token that must not come.
const WATCH: Duration = Duration::from_secs(3);

/// What one socket to the fake carried: the upgrade request (path, query
/// and headers, verbatim) and every text frame.
#[derive(Debug, Clone, Default)]
struct Conn {
    request: String,
    frames: Vec<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A bridge a crafted link could name: it accepts every socket, answers
/// nothing and records everything it gets.
struct RecordingBridge {
    addr: SocketAddr,
    conns: Arc<Mutex<Vec<Conn>>>,
    runtime: Option<Runtime>,
}

impl RecordingBridge {
    fn start() -> RecordingBridge {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the fake bridge");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("the fake's address");
        let conns = Arc::new(Mutex::new(Vec::new()));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("the fake bridge's runtime");
        let shared = Arc::clone(&conns);
        runtime.spawn(async move {
            let Ok(listener) = TcpListener::from_std(listener) else {
                return;
            };
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(record(stream, Arc::clone(&shared)));
            }
        });
        RecordingBridge {
            addr,
            conns,
            runtime: Some(runtime),
        }
    }

    fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    fn conns(&self) -> Vec<Conn> {
        lock(&self.conns).clone()
    }
}

impl Drop for RecordingBridge {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

async fn record(stream: tokio::net::TcpStream, conns: Arc<Mutex<Vec<Conn>>>) {
    let mut request = String::new();
    // The callback's `Result` (and its large error) is tungstenite's signature.
    #[allow(clippy::result_large_err)]
    let handshake = tokio_tungstenite::accept_hdr_async(stream, |req: &Request, resp: Response| {
        request = format!("{} {:?}", req.uri(), req.headers());
        Ok(resp)
    })
    .await;
    let Ok(mut ws) = handshake else { return };
    let id = {
        let mut conns = lock(&conns);
        conns.push(Conn {
            request,
            frames: Vec::new(),
        });
        conns.len() - 1
    };
    while let Some(Ok(frame)) = ws.next().await {
        let text = match frame {
            Message::Text(t) => t.to_string(),
            Message::Binary(b) => String::from_utf8_lossy(&b).into_owned(),
            _ => continue,
        };
        if let Some(c) = lock(&conns).get_mut(id) {
            c.frames.push(text);
        }
    }
}

/// Fails when anything the fake got carries the token or a sign-in.
fn no_token(fake: &RecordingBridge) -> Result<(), String> {
    for c in fake.conns() {
        let leak = |s: &str| s.contains(ADMIN_TOKEN) || s.contains("bridgeAuth");
        if leak(&c.request) || c.frames.iter().any(|f| leak(f)) {
            return Err(format!("the foreign bridge got {c:?}"));
        }
    }
    Ok(())
}

async fn sign_in(browser: &Browser) {
    browser.type_into("#admin-token", ADMIN_TOKEN).await;
    browser.click("#admin-login").await;
    browser
        .wait_text("[data-testid=auth-result]", "Signed in", PAGE_READY)
        .await;
}

async fn add_test_server(browser: &Browser, name: &str) {
    browser.type_into("#new-name", name).await;
    browser.type_into("#new-address", "test.example.org").await;
    browser.type_into("#new-port", "20500").await;
    browser.click("#add-server").await;
}

fn status_of(name: &str) -> String {
    format!("[data-testid=test-server][data-name=\"{name}\"] [data-testid=test-server-status]")
}

#[tokio::test]
async fn a_foreign_bridge_in_the_link_never_gets_the_token() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let fake = RecordingBridge::start();
    let driver = Driver::start();
    let browser = driver.browser().await;

    // A signed-in tab with a test server: the token is in sessionStorage.
    browser.goto(&lobby.url("/admin")).await;
    sign_in(&browser).await;
    add_test_server(&browser, "Guard Test").await;
    browser
        .wait_text(&status_of("Guard Test"), "registered", PAGE_READY)
        .await;

    // The same tab follows a crafted link naming another bridge.
    browser
        .goto(&lobby.url(&format!("/admin?bridge={}", fake.url())))
        .await;
    // A loopback page may list from a loopback bridge (development), so the
    // list's socket goes there, with nothing but the subscription.
    wait_for("the page to subscribe at the fake", PAGE_READY, || async {
        let conns = fake.conns();
        if conns
            .iter()
            .any(|c| c.frames.iter().any(|f| f.contains("bridgeSubscribe")))
        {
            Ok(())
        } else {
            Err(format!("{conns:?}"))
        }
    })
    .await;
    // A user who tries to sign in here anyway gets no form to do it with.
    let form = browser
        .js("const b = document.querySelector('#admin-login'); if (b) b.click(); return !!b;")
        .await;
    holds_for("no token at the foreign bridge", WATCH, || async {
        no_token(&fake)
    })
    .await;
    assert_eq!(
        form,
        serde_json::json!(false),
        "a sign-in form for the foreign bridge"
    );
    // The test server signed in again at the bridge that served the page
    // and registered there: the master's answer to its own query lists it
    // (the list on the page comes from the foreign bridge and never will).
    browser
        .wait_text(&status_of("Guard Test"), "registered", PAGE_READY)
        .await;
    eprintln!("the foreign bridge got: {:?}", fake.conns());
}

#[tokio::test]
async fn the_printed_admin_link_signs_in_and_leaves_the_address_bar() {
    let _serial = e2e::serial().await;
    // A bridge without a token of its own generates one and prints the link.
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("bridge.log");
    let mut cmd = Command::new(paths::binary("bridge"));
    cmd.args([
        "--listen",
        "127.0.0.1:0",
        "--embedded-master",
        "127.0.0.1:0",
    ])
    .arg("--static")
    .arg(paths::dist_dir())
    .env_remove("BRIDGE_ADMIN_TOKEN");
    // stdout is a pipe of its own here (the log goes to the file): the
    // link comes on stdout, after the readiness line, and never into the log.
    let (_bridge, link) =
        Proc::spawn_ready("bridge", cmd, &log, "admin page: ", Duration::from_secs(20));
    let token = link
        .split_once("#token=")
        .map(|(_, t)| t.to_owned())
        .unwrap_or_else(|| panic!("no token in the link {link:?}"));
    let logged = std::fs::read_to_string(&log).expect("the bridge's log");
    assert!(
        !logged.contains(&token),
        "the token is in the log:\n{logged}"
    );

    let driver = Driver::start();
    let browser = driver.browser().await;
    browser.goto(&link).await;
    browser
        .wait_text("[data-testid=auth-result]", "Signed in", PAGE_READY)
        .await;
    let href = browser.js("return location.href;").await;
    let href = href.as_str().unwrap_or_default();
    assert!(
        href.ends_with("/admin") && !href.contains(&token) && !href.contains('#'),
        "the address bar still holds the token: {href}"
    );
    // The history entry was replaced, not added: back leaves the page.
    let entries = browser.js("return history.length;").await;
    assert_eq!(
        entries,
        serde_json::json!(2),
        "history entries after the link"
    );
}

/// `s` as a JavaScript string literal.
fn js_str(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// Whether the element that holds exactly `name` inside `scope` isolates
/// it (`unicode-bidi: isolate`, from `dir` or `<bdi>`), so a bidi control in
/// the name cannot reorder anything beside it.
async fn isolated(browser: &Browser, scope: &str, name: &str) -> Result<(), String> {
    let (scope_js, name) = (js_str(scope), js_str(name));
    let script = format!(
        "const scope = document.querySelector({scope_js}); if (!scope) return 'no scope';
         const walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT);
         let node; while ((node = walker.nextNode()) && node.data !== {name}) {{}}
         if (!node) return 'no text node with the name';
         const e = node.parentElement, b = getComputedStyle(e).unicodeBidi;
         return e.textContent === {name} && b === 'isolate' ? 'ok' : b + ' on ' + e.outerHTML;"
    );
    match browser.js(&script).await.as_str() {
        Some("ok") => Ok(()),
        other => Err(format!("{scope}: {other:?}")),
    }
}

#[tokio::test]
async fn a_name_with_a_bidi_override_is_isolated() {
    let _serial = e2e::serial().await;
    // Another game's server (names are not validated there) and its player.
    let game_name = "Arena\u{202E}3 vs 1";
    let player_name = "Bob\u{202E}kcab";
    let game = GameAgentServer::start(
        Status {
            players: 1,
            max_players: 8,
            level: "Karnak".into(),
            game_type: "Fragmatch".into(),
            version: "1.10".into(),
            game_name: "serioussamse".into(),
            session_name: game_name.into(),
            keys: vec![],
        },
        vec![Player {
            index: 0,
            name: Some(player_name.into()),
            frags: 3,
            ping: 40,
        }],
    )
    .await
    .expect("fake GameAgent server");
    let master = GameAgentMaster::start(vec![game.game_addr()])
        .await
        .expect("fake GameAgent master");
    let lobby = Lobby::start_with(&[
        "--gameagent-master",
        &master.addr().to_string(),
        "--game-poll-interval",
        "1s",
        // The fake is on 127.0.0.1.
        "--game-allow-private",
    ]);
    let name = "Evil\u{202E}gnp.exe";
    let stats = Stats {
        current: 1,
        max: 4,
        open: true,
        mode: 1,
    };
    let _server = GameServer::register(lobby.master, name, "192.0.2.7", 20007, stats);
    let driver = Driver::start();
    let browser = driver.browser().await;

    browser.goto(&lobby.url("/")).await;
    browser.wait_listed(name, true, PAGE_READY).await;
    let row = format!("[data-testid=server-row][data-name=\"{name}\"] .c-name");
    wait_for("the row's name isolated", PAGE_READY, || {
        isolated(&browser, &row, name)
    })
    .await;

    let source = format!("gameagent:{}", master.addr());
    browser
        .goto(&lobby.url(&format!("/?src={}", source.replace(':', "%3A"))))
        .await;
    let game_row = format!("[data-testid=game-row][data-name=\"{game_name}\"]");
    wait_for("the game row's name isolated", PAGE_READY, || {
        isolated(&browser, &game_row, game_name)
    })
    .await;
    browser.click(&format!("{game_row} .open-detail")).await;
    wait_for("the detail's title isolated", PAGE_READY, || {
        isolated(&browser, "#detail-title", game_name)
    })
    .await;
    let player = format!("[data-testid=detail-player][data-name=\"{player_name}\"]");
    wait_for("the player's name isolated", PAGE_READY, || {
        isolated(&browser, &player, player_name)
    })
    .await;

    browser.goto(&lobby.url("/admin")).await;
    sign_in(&browser).await;
    let test_name = "Test\u{202E}Bidi";
    add_test_server(&browser, test_name).await;
    let card = format!("[data-testid=test-server][data-name=\"{test_name}\"]");
    wait_for("the test server's name isolated", PAGE_READY, || {
        isolated(&browser, &card, test_name)
    })
    .await;
}
