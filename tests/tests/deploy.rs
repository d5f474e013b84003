//! The deployment of README.md "Deploying", end to end: one `master`, two
//! bridges relaying to it (`--master`, following its change feed with
//! `--master-feed`), and nginx in front of them with the
//! proxy rules of `deploy/nginx/lobby.conf` (rendered with this test's ports
//! and paths), TLS with a self-signed certificate made by openssl here, and
//! the precompressed front end served by nginx. Headless Chromium opens
//! `https://127.0.0.1:PORT/`, the list arrives over `wss://`, then the
//! bridge holding the page's socket dies: the page reconnects through nginx
//! to the other bridge, shows the list again and registers the admin's test
//! server again.
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

use bench::nginx::{self_signed, Site};
use e2e::{
    browser::{Browser, Driver, PAGE_READY},
    game::{GameServer, Stats},
    lobby::ADMIN_TOKEN,
    paths,
    process::{free_port, http_get, Proc},
    wait_for,
};
use serde_json::Value;
use tempfile::TempDir;

/// How long a binary may take to print its ready line.
const READY: Duration = Duration::from_secs(15);
/// The issue's bound for live changes.
const LIVE: Duration = Duration::from_secs(3);
/// A dead bridge: the page's backoff (0.5–2.5 s per attempt), nginx's
/// retry on the other bridge, the new socket's first list.
const RECOVERY: Duration = Duration::from_secs(20);

/// A Debian package the test needs, or panics with how to install it.
fn require(what: &str, found: Option<PathBuf>, package: &str) -> PathBuf {
    found.unwrap_or_else(|| {
        panic!(
            "{what} is missing: this test needs it. Install it with \
             `bash scripts/setup.sh test` (as root on Debian: apt-get install {package}), \
             or elsewhere install the equivalent and put it on PATH"
        )
    })
}

/// `name` on PATH, else in `/usr/sbin` (nginx is there for non-root users).
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

fn nginx() -> PathBuf {
    let found = match std::env::var_os("NGINX") {
        Some(path) => Some(PathBuf::from(path)).filter(|p| p.is_file()),
        None => which("nginx"),
    };
    require("nginx", found, "nginx libnginx-mod-http-brotli-static")
}

/// The module behind `brotli_static on;` (Debian loads it from
/// modules-enabled/; this test's own nginx.conf loads it by path).
fn brotli_module() -> PathBuf {
    let found = std::env::var_os("LOBBY_NGINX_BROTLI_MODULE")
        .map(PathBuf::from)
        .or_else(|| {
            Some(PathBuf::from(
                "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so",
            ))
        })
        .filter(|p| p.is_file());
    require(
        "nginx's brotli_static module (ngx_http_brotli_static_module.so; \
         or set LOBBY_NGINX_BROTLI_MODULE)",
        found,
        "libnginx-mod-http-brotli-static",
    )
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

/// nginx with `deploy/nginx/lobby.conf` in front of `bridges`.
struct Nginx {
    https: SocketAddr,
    http: SocketAddr,
    dir: PathBuf,
    _proc: Proc,
}

impl Nginx {
    /// Renders the config into `dir` (serving `dir/dist`), checks it with
    /// `nginx -t`, starts nginx in the foreground and waits until it answers
    /// on its HTTP port.
    fn start(dir: &Path, bridges: [SocketAddr; 2]) -> Nginx {
        let nginx = nginx();
        let module = brotli_module();
        let (cert, key) = self_signed(dir).unwrap_or_else(|e| panic!("{e}"));
        let root = dir.join("dist");
        let https: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        let http: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        let template =
            std::fs::read_to_string(paths::workspace_root().join("deploy/nginx/lobby.conf"))
                .expect("read deploy/nginx/lobby.conf");
        let site = Site {
            main: https,
            tls: true,
            redirect: http,
            bridges,
            cert: &cert,
            key: &key,
            root: &root,
        }
        .render(&template)
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("lobby.conf"), site).expect("write lobby.conf");
        let d = dir.display();
        // What /etc/nginx/nginx.conf would hold, minus everything global:
        // the pid file, logs and temporary files stay in `dir`.
        let main = format!(
            "load_module {module};\n\
             worker_processes 1;\n\
             pid {d}/nginx.pid;\n\
             error_log {d}/error.log info;\n\
             events {{ worker_connections 512; }}\n\
             http {{\n\
             \x20   types {{ text/html html; text/css css; application/javascript js; \
             application/wasm wasm; }}\n\
             \x20   default_type application/octet-stream;\n\
             \x20   access_log {d}/access.log;\n\
             \x20   client_body_temp_path {d}/tmp/body;\n\
             \x20   proxy_temp_path {d}/tmp/proxy;\n\
             \x20   fastcgi_temp_path {d}/tmp/fastcgi;\n\
             \x20   uwsgi_temp_path {d}/tmp/uwsgi;\n\
             \x20   scgi_temp_path {d}/tmp/scgi;\n\
             \x20   include {d}/lobby.conf;\n\
             }}\n",
            module = module.display()
        );
        std::fs::create_dir_all(dir.join("tmp")).expect("create tmp/");
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, main).expect("write nginx.conf");
        let base = |cmd: &mut Command| {
            cmd.arg("-p")
                .arg(format!("{d}/"))
                .arg("-c")
                .arg(&conf)
                .arg("-e")
                .arg(dir.join("error.log"));
        };

        let mut check = Command::new(&nginx);
        base(&mut check);
        check.arg("-t");
        let said = run(
            "nginx -t on the rendered deploy/nginx/lobby.conf",
            &mut check,
        );
        assert!(said.contains("test is successful"), "{said}");

        let mut cmd = Command::new(&nginx);
        base(&mut cmd);
        cmd.args(["-g", "daemon off;"]);
        let proc = Proc::spawn("nginx", cmd, &dir.join("nginx.out"));
        wait_blocking("nginx to answer", READY, || {
            http_get(http, "/").map(|r| r.status)
        });
        Nginx {
            https,
            http,
            dir: dir.to_path_buf(),
            _proc: proc,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.https)
    }

    fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default()
    }
}

/// A blocking poll for set-up (before any browser exists).
fn wait_blocking<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl FnMut() -> Result<T, String>,
) -> T {
    let start = std::time::Instant::now();
    loop {
        match probe() {
            Ok(v) => return v,
            Err(seen) if start.elapsed() >= timeout => {
                panic!("timed out after {timeout:?} waiting for {what}; last seen: {seen}")
            }
            Err(_) => std::thread::sleep(e2e::POLL_EVERY),
        }
    }
}

/// Where the master listens: its public port and its change feed.
#[derive(Debug, Clone, Copy)]
struct MasterAddrs {
    master: SocketAddr,
    feed: SocketAddr,
}

/// `master` on a free port, its change feed on another, as
/// lobby-master.service starts it.
fn start_master(dir: &Path) -> (Proc, MasterAddrs) {
    let feed: SocketAddr = format!("127.0.0.1:{}", e2e::process::free_port())
        .parse()
        .expect("an address");
    let mut cmd = Command::new(paths::binary("master"));
    cmd.args(["--listen", "127.0.0.1:0", "--feed-listen"])
        .arg(feed.to_string());
    let (proc, addr) = Proc::spawn_ready(
        "master",
        cmd,
        &dir.join("master.log"),
        "master listening on ",
        READY,
    );
    let master = addr.parse().expect("the master's address");
    (proc, MasterAddrs { master, feed })
}

/// A bridge relaying to the master on `listen` and following its change
/// feed, as lobby-bridge@.service starts one (the same flags but
/// `--trusted-proxy`); log `bridge-{n}.log`.
fn start_bridge(dir: &Path, n: u32, listen: &str, master: MasterAddrs) -> (Proc, SocketAddr) {
    let mut cmd = Command::new(paths::binary("bridge"));
    cmd.args(["--listen", listen, "--master"])
        .arg(master.master.to_string())
        .arg("--master-feed")
        .arg(master.feed.to_string())
        .arg("--static")
        .arg(dir.join("dist"))
        .arg("--admin-token-file")
        .arg(dir.join("admin-token"))
        // nginx on loopback names the client in X-Forwarded-For.
        .args(["--trusted-proxy", "127.0.0.1/32"])
        .env("RUST_LOG", "info");
    let (proc, rest) = Proc::spawn_ready(
        "bridge",
        cmd,
        &dir.join(format!("bridge-{n}.log")),
        "bridge listening on ",
        READY,
    );
    let addr = rest
        .split_whitespace()
        .next()
        .and_then(|u| u.strip_prefix("http://"))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("unexpected ready line from the bridge: {rest:?}"));
    (proc, addr)
}

/// The bridge's `bridge_connections{role="admin"}`.
fn admins(bridge: SocketAddr) -> Result<i64, String> {
    connections(bridge, "admin")
}

/// The bridge's `bridge_connections{role="ROLE"}`.
fn connections(bridge: SocketAddr, role: &str) -> Result<i64, String> {
    let r = http_get(bridge, "/metrics")?;
    let prefix = format!("bridge_connections{{role=\"{role}\"}} ");
    r.body
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no {role} gauge in {}", r.body))
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

/// Signs the admin page in and registers one test server named `name`.
async fn add_test_server(browser: &Browser, name: &str) {
    browser.type_into("#admin-token", ADMIN_TOKEN).await;
    browser.click("#admin-login").await;
    browser
        .wait_text("[data-testid=auth-result]", "Signed in", PAGE_READY)
        .await;
    browser.type_into("#new-name", name).await;
    browser.type_into("#new-address", "test.example.org").await;
    browser.type_into("#new-port", "20500").await;
    browser.click("#add-server").await;
    browser
        .wait_text(
            &format!(
                "[data-testid=test-server][data-name=\"{name}\"] [data-testid=test-server-status]"
            ),
            "registered",
            LIVE,
        )
        .await;
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

    let (_master, master) = start_master(dir);
    dist_copy(&dir.join("dist"));
    let (a, a_addr) = start_bridge(dir, 0, "127.0.0.1:0", master);
    let (b, b_addr) = start_bridge(dir, 1, "127.0.0.1:0", master);
    let mut bridges = [Some(a), Some(b)];
    let addrs = [a_addr, b_addr];
    let nginx = Nginx::start(dir, addrs);

    // Plain HTTP only redirects to https://.
    let redirect = http_get(nginx.http, "/admin").expect("GET http:// /admin");
    assert_eq!(redirect.status, 301, "{redirect:?}");
    assert!(
        redirect
            .head
            .to_ascii_lowercase()
            .contains("location: https://"),
        "{}",
        redirect.head
    );

    // Both bridges follow the master's change feed (no polling).
    for addr in addrs {
        wait_blocking(
            "the bridge to follow the master's feed",
            READY,
            || match http_get(addr, "/metrics")?
                .body
                .lines()
                .find_map(|l| l.strip_prefix("bridge_master_feed_up "))
            {
                Some("1") => Ok(()),
                other => Err(format!("bridge_master_feed_up {other:?}")),
            },
        );
    }
    eprintln!("master, bridges and nginx up after {:?}", start.elapsed());
    let _feuerland =
        GameServer::register(master.master, "Feuerland", "192.168.0.10", 20000, stats());
    let driver = Driver::start();
    let browser = driver.browser_with(&["--ignore-certificate-errors"]).await;

    browser.goto(&nginx.url("/admin")).await;
    browser.wait_live(PAGE_READY).await;
    assert_eq!(
        browser.js("return location.protocol;").await,
        Value::String("https:".into())
    );
    add_test_server(&browser, "Nordlicht Test").await;
    // In-app navigation: the test server's socket belongs to the tab.
    browser.click("nav a[href='/']").await;
    browser.wait_listed("Feuerland", true, LIVE).await;
    browser.wait_listed("Nordlicht Test", true, LIVE).await;
    browser.mark_document().await;

    // A server registering over TCP appears live, pushed over wss://.
    let _bravo = GameServer::register(master.master, "Bravo", "192.0.2.3", 20003, stats());
    browser.wait_listed("Bravo", true, LIVE).await;
    // nginx serves the front end: the .wasm as the brotli twin, cached
    // forever; the page revalidated; /healthz from a bridge.
    let wasm_name = std::fs::read_dir(dir.join("dist"))
        .expect("list dist")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".wasm"))
        .expect("a .wasm in dist");
    let br = std::fs::metadata(dir.join("dist").join(format!("{wasm_name}.br")))
        .expect("the .wasm's brotli twin")
        .len();
    let transfer = browser
        .js(&format!(
            "const e = performance.getEntriesByType('resource')\
               .find(e => e.name.endsWith('/{wasm_name}'));\
             return e ? [e.encodedBodySize, e.decodedBodySize] : null;"
        ))
        .await;
    eprintln!(
        "the page downloaded {wasm_name} as {transfer} bytes (encoded, decoded); its .br is {br}"
    );
    assert_eq!(
        transfer[0].as_u64(),
        Some(br),
        "the .wasm did not come as its .br twin"
    );
    let headers = browser
        .js(&format!(
            "return (async () => {{\
               const w = await fetch('/{wasm_name}', {{cache: 'no-store'}});\
               const i = await fetch('/embed', {{cache: 'no-store'}});\
               const h = await fetch('/healthz', {{cache: 'no-store'}});\
               return [w.headers.get('cache-control'), w.headers.get('content-type'),\
                       i.headers.get('cache-control'), h.status, await h.text()];\
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

    // The page holds several sockets (the list, the admin's test server);
    // nginx spreads them over both bridges. Stop bridge 0: whatever it
    // held reconnects through nginx to bridge 1. Then start bridge 0 again
    // and stop bridge 1, which now holds every socket of the page, the
    // test server's included: all of them must move back to bridge 0, and
    // the test server (whose registration died with bridge 1's master
    // connection) must be registered again.
    let mut log_n = 2;
    for (stopped, survivor) in [(0, 1), (1, 0)] {
        eprintln!(
            "stopping bridge {stopped} ({}); admin sockets per bridge: {:?}",
            addrs[stopped],
            [admins(addrs[0]), admins(addrs[1])]
        );
        // The page's sockets, wherever they are: all of them must end up on
        // the survivor.
        let page_sockets = sockets(addrs[0]).unwrap_or(0) + sockets(addrs[1]).unwrap_or(0);
        assert!(page_sockets >= 2, "the page holds {page_sockets} sockets");
        eprintln!(
            "the page holds {page_sockets} sockets: {:?} on bridge 0, {:?} on bridge 1",
            sockets(addrs[0]),
            sockets(addrs[1])
        );
        let since = std::time::Instant::now();
        if let Some(mut bridge) = bridges[stopped].take() {
            bridge.kill();
        }
        if stopped == 1 {
            // The page's list socket was on it (on bridge 0, maybe not).
            wait_for("the page to notice", LIVE, || async {
                let s = browser.status().await;
                if s.starts_with("Reconnecting") {
                    Ok(s)
                } else {
                    Err(s)
                }
            })
            .await;
        }
        // Back through nginx, on the other bridge: live, the list again,
        // and the test server registered.
        browser.wait_live(RECOVERY).await;
        for name in ["Feuerland", "Bravo", "Nordlicht Test"] {
            browser.wait_listed(name, true, RECOVERY).await;
        }
        assert!(browser.same_document().await, "the page reloaded");
        eprintln!(
            "all listed again {:?} after stopping bridge {stopped}",
            since.elapsed()
        );
        wait_blocking(
            "the admin's sockets on the surviving bridge",
            LIVE,
            || match admins(addrs[survivor])? {
                0 => Err("none".into()),
                n => Ok(n),
            },
        );
        // The pill and the rows above may still show the old socket's
        // state (the page had not noticed the kill yet): wait until every
        // socket of the page has moved, or a restarted bridge 0 could get
        // one back and stopping bridge 1 would not touch it.
        wait_blocking(
            &format!("all {page_sockets} sockets of the page on the surviving bridge"),
            RECOVERY,
            || match sockets(addrs[survivor])? {
                n if n >= page_sockets => Ok(n),
                n => Err(format!("{n}")),
            },
        );
        if stopped == 0 {
            // Every socket of the page is on bridge 1 now.
            let (proc, addr) = start_bridge(dir, log_n, &addrs[0].to_string(), master);
            assert_eq!(addr, addrs[0], "bridge 0 moved");
            bridges[0] = Some(proc);
            log_n += 1;
        }
    }
    // The test server's status on the admin page says registered again.
    browser.click("nav a[href='/admin']").await;
    browser
        .wait_text(
            "[data-testid=test-server][data-name=\"Nordlicht Test\"] [data-testid=test-server-status]",
            "registered",
            LIVE,
        )
        .await;
    // Nginx logs a WebSocket when it ends: the ones to the stopped bridges.
    let log = nginx.access_log();
    assert!(
        log.lines().any(|l| l.contains("\"GET /ws HTTP/1.1\" 101 ")),
        "no WebSocket upgrade through nginx's TLS server in its access log:\n{log}"
    );
    // One bridge was up all along: nginx never turned the page away. (It
    // did, "no live upstreams", while it held both bridges as failed: the
    // restarted one stays marked as long as its first WebSocket lives.)
    assert!(
        !log.lines().any(|l| l.contains("\"GET /ws HTTP/1.1\" 502 ")),
        "nginx answered 502 to a WebSocket while a bridge was up:\n{log}"
    );
    // Pushes still work after the switch.
    browser.click("nav a[href='/']").await;
    let _charlie = GameServer::register(master.master, "Charlie", "192.0.2.4", 20004, stats());
    browser.wait_listed("Charlie", true, LIVE).await;
    browser.screenshot("deploy-after-failover").await;
    browser.close().await;
}
