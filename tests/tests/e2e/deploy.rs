//! The deployment of docs/deploying.md, end to end: one `master`, two
//! bridges relaying to it (`--master`, following its change feed with
//! `--master-feed`) and sharing one PostgreSQL database (a scratch cluster;
//! its URL in the shipped `deploy/systemd/bridge.env`, read as the unit's
//! `EnvironmentFile`), and nginx in front of them with the
//! proxy rules of `deploy/nginx/lobby.conf` (rendered with this test's ports
//! and paths), TLS with a self-signed certificate made by openssl here, and
//! the precompressed front end served by nginx. Headless Chromium opens
//! `https://127.0.0.1:PORT/`, the list arrives over `wss://`, then the
//! bridge holding the page's socket dies: the page reconnects through nginx
//! to the other bridge, shows the list again and registers the admin's test
//! server again. The two bridges give the same keys, details, badges and
//! histories (a badge URL taken from one answers on the other, and through
//! nginx on every request), a restarted bridge shows the history at once,
//! and killing the bridge that records the history loses no interval.
//!
//! nginx runs unprivileged: its prefix, pid file, logs and temporary files
//! are in a temporary folder, on free ports. Missing nginx (or its
//! brotli_static module, or openssl) fails the test with what to install;
//! `bash scripts/setup.sh test` installs them. The systemd units are checked
//! with `systemd-analyze verify` where it exists (skipped with a message
//! otherwise).

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use e2e::until_blocking;
use e2e::{
    browser::Driver,
    game::{open_feuerland, GameServer, Stats},
    pages::{AdminPage, ListPage},
    paths,
    process::{http_get, Proc},
    product::{connections, ADMIN_TOKEN},
};
use lobby_testkit::{
    launch::{BridgeLaunch, FeedListen, MasterFeed, MasterLaunch},
    metrics::sample,
    nginx::{self, Main, Nginx},
    postgres::{self, Cluster},
};
use serde_json::Value;
use tempfile::TempDir;

// The handover's bound (two intervals and 5 s) and the 150 ms across
// bridges are benchmarks' targets (bench/README.md: handover, scaleout);
// here they are reported, and every wait is bounded only by HUNG.

/// The bridges' `--history-interval` here (the product's is a minute).
const INTERVAL: Duration = Duration::from_secs(2);
/// The database the bridges share.
const DB: &str = "lobby";

/// `name` on PATH, else in `/usr/sbin` or `/usr/bin`.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Runs `cmd`, panicking with its output unless it succeeds; returns
/// stdout and stderr together.
fn run(what: &str, cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what} ({cmd:?}): {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{text}",
        out.status
    );
    text
}

/// Copies the Trunk build into `to` (nginx's workers must be able to read
/// it even when the test runs as root), then writes its .br/.gz twins with
/// the project's own `precompress`.
fn dist_copy(to: &Path) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("create the dist copy");
        for entry in std::fs::read_dir(from).expect("read dist") {
            let entry = entry.expect("dist entry");
            let path = entry.path();
            let target = to.join(entry.file_name());
            if path.is_dir() {
                copy(&path, &target);
            } else {
                std::fs::copy(&path, &target).expect("copy a dist file");
            }
        }
    }
    copy(&paths::dist_dir(), to);
    run(
        "precompress",
        Command::new(paths::binary("precompress")).arg(to),
    );
}

/// nginx with `deploy/nginx/lobby.conf` in front of `bridges` (the kit's
/// launcher, which checks the rendered file with `nginx -t`): TLS, one
/// worker, and the access log this test reads; serving `dir/dist`.
fn start_nginx(dir: &Path, bridges: [SocketAddr; 2]) -> Nginx {
    let found = nginx::find().unwrap_or_else(|why| {
        panic!(
            "{why}: this test needs nginx with its brotli_static module. Install them with \
             `bash scripts/setup.sh test` (as root on Debian: apt-get install nginx \
             libnginx-mod-http-brotli-static), or elsewhere install the equivalent and put \
             nginx on PATH (or set NGINX and LOBBY_NGINX_BROTLI_MODULE)"
        )
    });
    let main = Main {
        workers: "1",
        nofile: None,
        error_level: "info",
        worker_connections: 512,
        access_log: true,
    };
    Nginx::start(&found, dir, true, bridges, &dir.join("dist"), &main)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `master` on a free port, its change feed on another, as
/// lobby-master.service starts it; returns the master's and the feed's
/// addresses.
fn start_master(dir: &Path) -> (Proc, SocketAddr, SocketAddr) {
    let mut launch = MasterLaunch::new(paths::binary("master"));
    launch.feed = FeedListen::At(SocketAddr::from(([127, 0, 0, 1], 0)));
    // As the unit starts it: no network exempt from the limits.
    launch.exempt_loopback = false;
    let master = launch
        .start(&dir.join("master.log"))
        .unwrap_or_else(|e| panic!("{e}"));
    let feed = master.feed.expect("the feed's address");
    (master.proc, master.addr, feed)
}

/// The shipped `deploy/systemd/bridge.env` with its `DATABASE_URL` set to
/// `url`, the history sampled every [`INTERVAL`] and the per-address API
/// budget opened (the test asks both bridges directly from 127.0.0.1, as
/// nginx does for everyone), written to
/// `dir/bridge.env` as an operator edits it in `/etc/lobby`; returns its
/// variables as systemd reads an `EnvironmentFile` (`KEY=VALUE` lines,
/// `#` comments).
fn bridge_env(dir: &Path, url: &str) -> Vec<(String, String)> {
    let shipped =
        std::fs::read_to_string(paths::workspace_root().join("deploy/systemd/bridge.env"))
            .expect("read deploy/systemd/bridge.env");
    assert!(
        shipped.lines().any(|l| l.starts_with("DATABASE_URL=")),
        "deploy/systemd/bridge.env names no DATABASE_URL:\n{shipped}"
    );
    let mut edited: String = shipped
        .lines()
        .map(|l| match l.strip_prefix("DATABASE_URL=") {
            Some(_) => format!("DATABASE_URL={url}\n"),
            None => format!("{l}\n"),
        })
        .collect();
    edited.push_str(&format!(
        "BRIDGE_HISTORY_INTERVAL={}ms\nBRIDGE_API_RATE=1000000\nBRIDGE_API_BURST=1000000\n",
        INTERVAL.as_millis()
    ));
    std::fs::write(dir.join("bridge.env"), &edited).expect("write bridge.env");
    edited
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l
                .split_once('=')
                .unwrap_or_else(|| panic!("not KEY=VALUE in bridge.env: {l:?}"));
            (k.trim().to_owned(), v.trim().to_owned())
        })
        .collect()
}

/// A bridge relaying to `master` on `listen` and following its change
/// `feed`, as lobby-bridge@.service starts one (the same flags but
/// `--trusted-proxy`) with `env` from its `EnvironmentFile`; log
/// `bridge-{n}.log`.
fn start_bridge(
    dir: &Path,
    n: u32,
    listen: &str,
    (master, feed): (SocketAddr, SocketAddr),
    env: &[(String, String)],
) -> (Proc, SocketAddr) {
    let mut launch = BridgeLaunch::new(
        paths::binary("bridge"),
        dir.join("dist"),
        dir.join("admin-token"),
    );
    launch.listen = listen.parse().expect("an address to listen on");
    launch.master = Some(master);
    launch.master_feed = MasterFeed::At(feed);
    // The budget of whole lists as bridge.env sets it.
    launch.api_rate = None;
    launch.env = env
        .iter()
        .map(|(k, v)| (k.into(), v.into()))
        // As StateDirectory= gives each unit one of its own.
        .chain([(
            "BRIDGE_DATA_DIR".into(),
            dir.join(format!("data-{n}")).into(),
        )])
        .collect();
    // nginx on loopback names the client in X-Forwarded-For.
    launch.args = vec!["--trusted-proxy".into(), "127.0.0.1/32".into()];
    let bridge = launch
        .start(&dir.join(format!("bridge-{n}.log")))
        .unwrap_or_else(|e| panic!("{e}"));
    (bridge.proc, bridge.http)
}

/// The bridge's `bridge_connections{role="admin"}`.
fn admins(bridge: SocketAddr) -> Result<i64, String> {
    connections(bridge, "admin")
}

/// Every WebSocket the bridge holds (each is a viewer or an admin).
fn sockets(bridge: SocketAddr) -> Result<i64, String> {
    Ok(connections(bridge, "viewer")? + connections(bridge, "admin")?)
}

/// The units with their binaries replaced by the built ones (verify checks
/// that ExecStart exists), checked by `systemd-analyze verify`: it must
/// print nothing (it reports unknown keys and bad values only as warnings).
fn verify_systemd_units(dir: &Path) {
    let Some(analyze) = which("systemd-analyze") else {
        eprintln!("SKIPPED: systemd-analyze is not installed; deploy/systemd/ not verified");
        return;
    };
    let units = paths::workspace_root().join("deploy/systemd");
    let out = dir.join("units");
    std::fs::create_dir_all(&out).expect("create units/");
    let bin = |name: &str| paths::binary(name).display().to_string();
    for (file, instance) in [
        ("lobby-master.service", "lobby-master.service"),
        ("lobby-bridge@.service", "lobby-bridge@8081.service"),
    ] {
        let text = std::fs::read_to_string(units.join(file)).expect("read a unit");
        let text = text
            .replace("/opt/lobby/bin/master", &bin("master"))
            .replace("/opt/lobby/bin/bridge", &bin("bridge"));
        std::fs::write(out.join(instance), text).expect("write a unit");
    }
    let said = run(
        "systemd-analyze verify deploy/systemd/*",
        Command::new(analyze)
            .arg("verify")
            .arg(out.join("lobby-master.service"))
            .arg(out.join("lobby-bridge@8081.service")),
    );
    assert!(
        said.trim().is_empty(),
        "systemd-analyze verify complained about deploy/systemd/:\n{said}"
    );
}

fn stats() -> Stats {
    Stats {
        current: 2,
        max: 4,
        open: true,
        mode: 2,
    }
}

/// The product as deployed: one master, two bridges relaying to it on one
/// database, nginx in front of them, all with their files in `dir`.
struct Deployment {
    dir: PathBuf,
    master: SocketAddr,
    feed: SocketAddr,
    addrs: [SocketAddr; 2],
    /// The bridges' environment (their `EnvironmentFile`).
    env: Vec<(String, String)>,
    // Field order: stopped front to back.
    nginx: Nginx,
    bridges: [Option<Proc>; 2],
    _master_proc: Proc,
    database: Cluster,
    /// The log number of the next bridge started.
    next_log: u32,
}

impl Deployment {
    fn start(dir: &Path) -> Deployment {
        let database = Cluster::start().unwrap_or_else(|e| panic!("{e}"));
        let url = database
            .create_database(DB)
            .unwrap_or_else(|e| panic!("{e}"));
        let env = bridge_env(dir, &url);
        let (master_proc, master, feed) = start_master(dir);
        dist_copy(&dir.join("dist"));
        let (a, a_addr) = start_bridge(dir, 0, "127.0.0.1:0", (master, feed), &env);
        let (b, b_addr) = start_bridge(dir, 1, "127.0.0.1:0", (master, feed), &env);
        let addrs = [a_addr, b_addr];
        let nginx = start_nginx(dir, addrs);
        Deployment {
            dir: dir.to_path_buf(),
            master,
            feed,
            addrs,
            env,
            nginx,
            bridges: [Some(a), Some(b)],
            _master_proc: master_proc,
            database,
            next_log: 2,
        }
    }

    /// Every socket both bridges hold (a stopped one counts none).
    fn all_sockets(&self) -> i64 {
        self.addrs.iter().map(|a| sockets(*a).unwrap_or(0)).sum()
    }

    /// Kills bridge `n` (SIGKILL).
    fn kill_bridge(&mut self, n: usize) {
        if let Some(mut bridge) = self.bridges[n].take() {
            bridge.kill();
        }
    }

    /// Starts bridge `n` again on its port.
    fn restart_bridge(&mut self, n: usize) {
        let listen = self.addrs[n].to_string();
        let (proc, addr) = start_bridge(
            &self.dir,
            self.next_log,
            &listen,
            (self.master, self.feed),
            &self.env,
        );
        assert_eq!(addr, self.addrs[n], "bridge {n} moved");
        self.bridges[n] = Some(proc);
        self.next_log += 1;
    }
}

/// `path` from `bridge` as JSON, with its status.
fn json_of(bridge: SocketAddr, path: &str) -> Result<(u16, Value), String> {
    let res = http_get(bridge, path)?;
    let v = serde_json::from_str(&res.body).unwrap_or(Value::Null);
    Ok((res.status, v))
}

/// Each listed server's key as `bridge` gives it, by name.
fn keys_by_name(bridge: SocketAddr) -> Result<Vec<(String, String)>, String> {
    let (status, v) = json_of(bridge, "/api/servers")?;
    if status != 200 {
        return Err(format!("/api/servers: {status}"));
    }
    let mut keys: Vec<(String, String)> = v["servers"]
        .as_array()
        .ok_or_else(|| v.to_string())?
        .iter()
        .filter_map(|s| {
            Some((
                s["name"].as_str()?.to_owned(),
                s["key"].as_str()?.to_owned(),
            ))
        })
        .collect();
    keys.sort();
    Ok(keys)
}

/// The bridge's `bridge_history_recording` (1 while it records).
fn recording(bridge: SocketAddr) -> Result<bool, String> {
    let body = http_get(bridge, "/metrics")?.body;
    match sample(&body, "bridge_history_recording") {
        Some(v) => Ok(v == 1.0),
        None => Err("no bridge_history_recording".into()),
    }
}

/// Both bridges, each asked directly, give the same key to every server
/// (one key secret, created once in the database), the same details, the
/// same history and each other's badges; through nginx a badge answers
/// on every request, whichever bridge takes it. Returns the key of
/// `name`.
async fn both_bridges_give_the_same_answers(
    page: &ListPage<'_>,
    addrs: [SocketAddr; 2],
    names: &[&str],
    name: &str,
) -> String {
    let keys = until_blocking("both bridges to key every server", || {
        let (a, b) = (keys_by_name(addrs[0])?, keys_by_name(addrs[1])?);
        let listed = |k: &[(String, String)]| names.iter().all(|n| k.iter().any(|(m, _)| m == n));
        if listed(&a) && listed(&b) {
            Ok((a, b))
        } else {
            Err(format!("{a:?} / {b:?}"))
        }
    });
    assert_eq!(
        keys.0, keys.1,
        "the two bridges keyed the servers differently"
    );
    let key = keys
        .0
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, k)| k.clone())
        .expect("the server's key");
    eprintln!(
        "both bridges key the {} servers alike: {:?}",
        keys.0.len(),
        keys.0
    );

    // Details: the same first sighting, from the one database. Until the
    // recorder's first sample of the server is written, each bridge answers
    // a listed server as first seen "now" (its own clock), so the two agree
    // once the row is there: waited for, bounded, and failing if they never
    // do.
    let details = format!("/api/servers/{key}");
    let (a, b) = until_blocking("the same first sighting on both bridges", || {
        let (sa, a) = json_of(addrs[0], &details)?;
        let (sb, b) = json_of(addrs[1], &details)?;
        if sa == 200 && sb == 200 && a["firstSeen"].is_number() && a["firstSeen"] == b["firstSeen"]
        {
            Ok((a, b))
        } else {
            Err(format!("{sa} {a} / {sb} {b}"))
        }
    });
    for field in ["firstSeen", "name", "key"] {
        assert_eq!(a[field], b[field], "{field}: {a} / {b}");
    }

    // The history: the same points (polled until neither has a sample the
    // other has not read yet).
    let history = format!("/api/servers/{key}/history?range=1h");
    let points = until_blocking("the same history on both bridges", || {
        let (sa, a) = json_of(addrs[0], &history)?;
        let (sb, b) = json_of(addrs[1], &history)?;
        match (a["points"].as_array(), b["points"].as_array()) {
            (Some(pa), Some(pb)) if sa == 200 && sb == 200 && pa.len() >= 2 && pa == pb => {
                Ok(pa.len())
            }
            _ => Err(format!("{sa} {a} / {sb} {b}")),
        }
    });
    eprintln!("both bridges give {name}'s history alike ({points} points)");

    // The badge: a URL from one bridge answers on the other.
    for addr in addrs {
        let res = http_get(addr, &format!("/badge/{key}.svg")).expect("GET the badge");
        assert_eq!(res.status, 200, "the badge on bridge {addr}: {res:?}");
        assert!(res.body.starts_with("<svg"), "{res:?}");
    }
    let statuses = page
        .js(&format!(
            "return (async () => {{\
               const out = [];\
               for (let i = 0; i < 6; i++) {{\
                 const r = await fetch('/badge/{key}.svg', {{cache: 'no-store'}});\
                 out.push(r.status);\
               }}\
               return out;\
             }})();"
        ))
        .await;
    assert_eq!(
        statuses,
        Value::from(vec![200; 6]),
        "the badge through nginx, six times"
    );
    key
}

/// The recorded samples' times, as the database holds them.
fn recorded_times(database: &Cluster) -> Vec<i64> {
    database.sample_times(DB).unwrap_or_else(|e| panic!("{e}"))
}

/// Every interval from the first sample to the last was recorded once,
/// across the bridges killed on the way.
fn no_interval_lost(database: &Cluster) {
    let times = recorded_times(database);
    let gaps = postgres::interval_gaps(&times, INTERVAL.as_millis() as i64);
    eprintln!(
        "{} samples recorded over {} s, gaps: {gaps:?}",
        times.len(),
        times
            .last()
            .zip(times.first())
            .map_or(0, |(l, f)| (l - f) / 1000)
    );
    assert!(times.len() >= 5, "only {} samples recorded", times.len());
    assert!(
        gaps.is_empty(),
        "intervals lost or doubled between samples: {gaps:?}"
    );
}

/// Which bridge records now (waiting for one to), and how long it took.
fn wait_recorder(addrs: [SocketAddr; 2], alive: [bool; 2]) -> (usize, Duration) {
    let since = std::time::Instant::now();
    let n = until_blocking("one bridge to record the history", || {
        let on: Vec<usize> = (0..2)
            .filter(|&i| alive[i] && recording(addrs[i]).unwrap_or(false))
            .collect();
        match on.as_slice() {
            [n] => Ok(*n),
            other => Err(format!("recording: {other:?}")),
        }
    });
    (n, since.elapsed())
}

/// nginx serves the front end: the .wasm as the brotli twin, cached
/// forever (the admin's bundle, which `page` was loaded as, and the
/// player's); the pages revalidated (/admin, a server's page too);
/// /healthz and the lobby's badge from a bridge.
async fn nginx_serves_the_front_end(page: &ListPage<'_>, dir: &Path) {
    let wasm_name = std::fs::read_dir(dir.join("dist"))
        .expect("list dist")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".wasm"))
        .expect("a .wasm in dist");
    let loaded = page.wasm_loaded().await;
    let [admin_wasm] = &loaded[..] else {
        panic!("the page loaded {loaded:?}, not one .wasm");
    };
    assert!(admin_wasm.starts_with("/admin/"), "{admin_wasm}");
    let br = std::fs::metadata(dir.join(format!("dist{admin_wasm}.br")))
        .expect("the .wasm's brotli twin")
        .len();
    let transfer = page
        .js(&format!(
            "const e = performance.getEntriesByType('resource')\
               .find(e => new URL(e.name).pathname === '{admin_wasm}');\
             return e ? [e.encodedBodySize, e.decodedBodySize] : null;"
        ))
        .await;
    eprintln!(
        "the page downloaded {admin_wasm} as {transfer} bytes (encoded, decoded); its .br is {br}"
    );
    assert_eq!(
        transfer[0].as_u64(),
        Some(br),
        "the .wasm did not come as its .br twin"
    );
    let headers = page
        .js(&format!(
            "return (async () => {{\
               const w = await fetch('/{wasm_name}', {{cache: 'no-store'}});\
               const i = await fetch('/embed', {{cache: 'no-store'}});\
               const h = await fetch('/healthz', {{cache: 'no-store'}});\
               const b = await fetch('/badge.svg', {{cache: 'no-store'}});\
               const s = await fetch('/server/0123456789abcdef', {{cache: 'no-store'}});\
               const a = await fetch('/admin', {{cache: 'no-store'}});\
               const aw = await fetch('{admin_wasm}', {{cache: 'no-store'}});\
               const r = await fetch('/robots.txt', {{cache: 'no-store'}});\
               const m = await fetch('/manifest.webmanifest', {{cache: 'no-store'}});\
               const p = await fetch('/', {{cache: 'no-store'}});\
               const n = await fetch('/no/such/page', {{cache: 'no-store'}});\
               return [w.headers.get('cache-control'), w.headers.get('content-type'),\
                       i.headers.get('cache-control'), h.status, await h.text(),\
                       b.status, b.headers.get('content-type'), (await b.text()).startsWith('<svg'),\
                       s.status, s.headers.get('cache-control'),\
                       a.status, a.headers.get('cache-control'), (await a.text()).includes('{admin_wasm}'),\
                       aw.headers.get('cache-control'), aw.headers.get('content-type'),\
                       r.headers.get('content-type'), m.headers.get('content-type'),\
                       (await p.text()).includes('<meta property=\"og:title\"'), n.status];\
             }})();"
        ))
        .await;
    assert_eq!(
        headers[0],
        Value::String("public, max-age=31536000, immutable".into()),
        "{headers}"
    );
    assert_eq!(
        headers[1],
        Value::String("application/wasm".into()),
        "{headers}"
    );
    assert_eq!(headers[2], Value::String("no-cache".into()), "{headers}");
    assert_eq!(headers[3], Value::from(200), "{headers}");
    assert!(
        headers[4]
            .as_str()
            .unwrap_or_default()
            .contains("\"master\":\"up\""),
        "{headers}"
    );
    assert_eq!(headers[5], Value::from(200), "/badge.svg: {headers}");
    assert_eq!(
        headers[6],
        Value::String("image/svg+xml".into()),
        "{headers}"
    );
    assert_eq!(headers[7], Value::Bool(true), "/badge.svg: {headers}");
    // A server's page for a key never seen: the bridge's 404 (the page
    // saying so), revalidated like the rest.
    assert_eq!(headers[8], Value::from(404), "/server/…: {headers}");
    assert_eq!(headers[9], Value::String("no-cache".into()), "{headers}");
    // /admin is the admin's page, revalidated; its .wasm kept forever.
    assert_eq!(headers[10], Value::from(200), "/admin: {headers}");
    assert_eq!(headers[11], Value::String("no-cache".into()), "{headers}");
    assert_eq!(headers[12], Value::Bool(true), "/admin: {headers}");
    assert_eq!(
        headers[13],
        Value::String("public, max-age=31536000, immutable".into()),
        "{headers}"
    );
    assert_eq!(
        headers[14],
        Value::String("application/wasm".into()),
        "{headers}"
    );
    // robots.txt and the manifest with their types, the list's page with
    // its preview written in by a bridge, and a path that is no page a 404.
    assert_eq!(headers[15], Value::String("text/plain".into()), "{headers}");
    assert_eq!(
        headers[16],
        Value::String("application/manifest+json".into()),
        "{headers}"
    );
    assert_eq!(headers[17], Value::Bool(true), "/: {headers}");
    assert_eq!(headers[18], Value::from(404), "/no/such/page: {headers}");
}

/// Milliseconds of the wall clock, as the page's `Date.now()` reads it.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// An admin's change made on bridge `on` (its own WebSocket, straight to
/// the bridge) shows on a page served by the other bridge: through the
/// master's change feed, with no poll. Measured from the moment the command
/// leaves to the moment the page's DOM has the row (a `MutationObserver`
/// in the page stamps it with `Date.now()`); the row's appearance and its
/// removal are both timed, printed, and held to [`ACROSS`].
async fn a_change_on_one_bridge_shows_on_the_others_page(driver: &Driver, addrs: [SocketAddr; 2]) {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    let (on, other) = (addrs[0], addrs[1]);
    let browser = driver.browser().await;
    browser.goto(&format!("http://{other}/")).await;
    let page = ListPage::new(&browser);
    page.wait_live().await;
    page.wait_listed("Feuerland", true).await;
    let name = "Across Bridges";
    let watch = |present: bool| {
        format!(
            "window.__across = null;\
             const has = () => Array.from(document.querySelectorAll('[data-testid=server-row]'))\
               .some(e => e.dataset.name === {n});\
             new MutationObserver((_, o) => {{\
               if (has() === {present}) {{ window.__across = Date.now(); o.disconnect(); }}\
             }}).observe(document.body, {{childList: true, subtree: true, attributes: true}});",
            n = e2e::browser::js_str(name)
        )
    };
    let (mut admin, _) = tokio_tungstenite::connect_async(format!("ws://{on}/ws"))
        .await
        .expect("an admin WebSocket on the first bridge");
    let auth = serde_json::json!({"command": "bridgeAuth", "content": {"token": ADMIN_TOKEN}});
    admin
        .send(Message::text(auth.to_string()))
        .await
        .expect("send bridgeAuth");
    let register = serde_json::json!({
        "command": "msRegisterGameServer",
        "content": {"serverName": name, "serverAddress": "192.0.2.9", "serverPort": 20009}
    });
    let stats = serde_json::json!({
        "command": "msUpdateGameServerStats",
        "content": {"players": {"current": 1, "max": 4}, "isLobbyOpen": true, "gameplayMode": 1}
    });
    let answer = e2e::bounded("bridgeAuth's answer", admin.next()).await;
    assert!(
        format!("{answer:?}").contains(r#"\"ok\":true"#),
        "bridgeAuth: {answer:?}"
    );
    let mut took = Vec::new();
    page.js(&watch(true)).await;
    let sent = now_ms();
    admin
        .send(Message::text(register.to_string()))
        .await
        .expect("send the registration");
    admin
        .send(Message::text(stats.to_string()))
        .await
        .expect("send the stats");
    page.wait_listed(name, true).await;
    took.push(("listed", page.js("return window.__across;").await, sent));
    page.js(&watch(false)).await;
    let sent = now_ms();
    admin.close(None).await.expect("close the admin's socket");
    page.wait_listed(name, false).await;
    took.push(("unlisted", page.js("return window.__across;").await, sent));
    for (what, seen, sent) in took {
        let seen = seen.as_u64().expect("the page stamped the change");
        let ms = seen.saturating_sub(sent);
        // Reported, not judged: the 150 ms target is the scale-out
        // benchmark's (bench/README.md, phase scaleout).
        eprintln!(
            "a change on bridge {on} ({what}) showed on bridge {other}'s page after {ms} ms (target 150 ms)"
        );
    }
    browser.close().await;
}

/// Kills bridge `stopped`: every socket of the page, the test server's
/// included, reconnects through nginx to `survivor`; the page is live
/// again, lists everything again and registers the test server again.
async fn the_page_moves_to_the_survivor(
    page: &ListPage<'_>,
    deployment: &mut Deployment,
    stopped: usize,
    survivor: usize,
) {
    let addrs = deployment.addrs;
    eprintln!(
        "stopping bridge {stopped} ({}); admin sockets per bridge: {:?}",
        addrs[stopped],
        [admins(addrs[0]), admins(addrs[1])]
    );
    // The page's sockets, wherever they are: all of them must end up on
    // the survivor.
    let page_sockets = deployment.all_sockets();
    assert!(page_sockets >= 2, "the page holds {page_sockets} sockets");
    eprintln!(
        "the page holds {page_sockets} sockets: {:?} on bridge 0, {:?} on bridge 1",
        sockets(addrs[0]),
        sockets(addrs[1])
    );
    let since = std::time::Instant::now();
    let recorded = recording(addrs[stopped]).unwrap_or(false);
    deployment.kill_bridge(stopped);
    // The survivor records (takes over if the killed bridge did), watched
    // from the kill on while the page moves.
    let mut alive = [true; 2];
    alive[stopped] = false;
    let handover = std::thread::spawn(move || wait_recorder(addrs, alive));
    if stopped == 1 {
        // The page's list socket was on it (on bridge 0, maybe not).
        page.wait_reconnecting().await;
    }
    // Back through nginx, on the other bridge: live, the list again, and
    // the test server registered.
    page.wait_live().await;
    for name in ["Feuerland", "Bravo", "Nordlicht Test"] {
        page.wait_listed(name, true).await;
    }
    assert!(page.same_document().await, "the page reloaded");
    eprintln!(
        "all listed again {:?} after stopping bridge {stopped}",
        since.elapsed()
    );
    let (recorder, took) = handover
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
    assert_eq!(recorder, survivor);
    if recorded {
        eprintln!(
            "bridge {stopped} recorded the history; bridge {survivor} took over {took:?} after it was killed"
        );
    }
    until_blocking(
        "the admin's sockets on the surviving bridge",
        || match admins(addrs[survivor])? {
            0 => Err("none".to_owned()),
            n => Ok(n),
        },
    );
    // The pill and the rows above may still show the old socket's state
    // (the page had not noticed the kill yet): wait until every socket of
    // the page has moved, or a restarted bridge could get one back and
    // stopping the other would not touch it.
    until_blocking(
        &format!("all {page_sockets} sockets of the page on the surviving bridge"),
        || match sockets(addrs[survivor])? {
            n if n >= page_sockets => Ok(n),
            n => Err(format!("{n}")),
        },
    );
}

/// nginx logs a WebSocket when it ends: the ones to the stopped bridges
/// are there; and one bridge was up all along, so nginx never turned the
/// page away. (It did, "no live upstreams", while it held both bridges as
/// failed: the restarted one stays marked as long as its first WebSocket
/// lives.)
fn nginx_never_turned_the_page_away(nginx: &Nginx) {
    let log = nginx.access_log();
    assert!(
        log.lines().any(|l| l.contains("\"GET /ws HTTP/1.1\" 101 ")),
        "no WebSocket upgrade through nginx's TLS server in its access log:\n{log}"
    );
    assert!(
        !log.lines().any(|l| l.contains("\"GET /ws HTTP/1.1\" 502 ")),
        "nginx answered 502 to a WebSocket while a bridge was up:\n{log}"
    );
}

#[tokio::test]
async fn two_bridges_behind_nginx_with_tls_survive_losing_one() {
    let _serial = e2e::serial().await;
    let start = std::time::Instant::now();
    let tmp: TempDir = tempfile::Builder::new()
        .prefix("lobby-e2e-deploy-")
        .tempdir()
        .expect("temp dir");
    let dir = tmp.path();
    // nginx's workers drop root (to nobody) when the test runs as root.
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod the temp dir");
    std::fs::write(dir.join("admin-token"), format!("{ADMIN_TOKEN}\n")).expect("token file");

    verify_systemd_units(dir);
    let mut deployment = Deployment::start(dir);
    let master = deployment.master;

    // Plain HTTP only redirects to https://.
    let redirect = http_get(deployment.nginx.redirect, "/admin").expect("GET http:// /admin");
    assert_eq!(redirect.status, 301, "{redirect:?}");
    assert!(
        redirect.head_contains("location: https://"),
        "{}",
        redirect.head
    );

    // Both bridges follow the master's change feed (no polling).
    for addr in deployment.addrs {
        until_blocking("the bridge to follow the master's feed", || {
            match sample(&http_get(addr, "/metrics")?.body, "bridge_master_feed_up") {
                Some(1.0) => Ok(()),
                other => Err(format!("bridge_master_feed_up {other:?}")),
            }
        });
    }
    eprintln!("master, bridges and nginx up after {:?}", start.elapsed());
    let _feuerland = open_feuerland(master);
    let driver = Driver::start();
    let browser = driver.browser_with(&["--ignore-certificate-errors"]).await;

    let admin = AdminPage::open(&browser, &deployment.nginx.url("/admin")).await;
    assert_eq!(
        admin.js("return location.protocol;").await,
        Value::String("https:".into())
    );
    admin.sign_in(ADMIN_TOKEN, "Signed in").await;
    admin.add_test_server("Nordlicht Test").await;
    admin.wait_card("Nordlicht Test", "registered").await;
    // In-app navigation: the test server's socket belongs to the tab.
    admin.click("nav a[href='/']").await;
    let page = ListPage::new(&browser);
    page.wait_listed("Feuerland", true).await;
    page.wait_listed("Nordlicht Test", true).await;
    page.mark_document().await;

    // A server registering over TCP appears live, pushed over wss://.
    let _bravo = GameServer::register(master, "Bravo", "192.0.2.3", 20003, stats());
    page.wait_listed("Bravo", true).await;
    nginx_serves_the_front_end(&page, dir).await;
    let key = both_bridges_give_the_same_answers(
        &page,
        deployment.addrs,
        &["Feuerland", "Bravo", "Nordlicht Test"],
        "Feuerland",
    )
    .await;
    wait_recorder(deployment.addrs, [true; 2]);

    a_change_on_one_bridge_shows_on_the_others_page(&driver, deployment.addrs).await;

    // The page holds several sockets (the list, the admin's test server);
    // nginx spreads them over both bridges. Stop bridge 0: whatever it
    // held moves to bridge 1. Then start bridge 0 again and stop bridge 1,
    // which now holds every socket of the page, the test server's
    // included: all of them must move back to bridge 0, and the test
    // server (whose registration died with bridge 1's master connection)
    // must be registered again.
    the_page_moves_to_the_survivor(&page, &mut deployment, 0, 1).await;
    deployment.restart_bridge(0);
    // A bridge started later shows the history at once, from the database.
    let (status, v) = json_of(
        deployment.addrs[0],
        &format!("/api/servers/{key}/history?range=1h"),
    )
    .expect("the restarted bridge's history");
    assert_eq!(status, 200, "{v}");
    assert!(
        v["points"].as_array().is_some_and(|p| p.len() >= 2),
        "the restarted bridge's first answer: {v}"
    );
    the_page_moves_to_the_survivor(&page, &mut deployment, 1, 0).await;
    admin.click("nav a[href='/admin']").await;
    admin.wait_card("Nordlicht Test", "registered").await;
    nginx_never_turned_the_page_away(&deployment.nginx);

    // Pushes still work after the switch.
    admin.click("nav a[href='/']").await;
    let _charlie = GameServer::register(master, "Charlie", "192.0.2.4", 20004, stats());
    page.wait_listed("Charlie", true).await;
    page.screenshot("deploy-after-failover").await;
    browser.close().await;
    // Two more samples by the last recorder, then every interval since the
    // start is in the database once.
    let before = recorded_times(&deployment.database).len();
    until_blocking("two more samples recorded", || {
        match recorded_times(&deployment.database).len() {
            n if n >= before + 2 => Ok(()),
            n => Err(format!("{n} samples, {before} before")),
        }
    });
    no_interval_lost(&deployment.database);
}
