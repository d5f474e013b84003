//! Headless Chromium over WebDriver: a `chromedriver` child process and
//! browser sessions (fantoccini over plain HTTP), with helpers that read the
//! page through the selectors the front end provides.

use std::{
    net::SocketAddr,
    path::PathBuf,
    process::Command,
    sync::atomic::{AtomicU32, Ordering},
    time::Duration,
};

use fantoccini::{
    actions::{InputSource, KeyAction, KeyActions},
    elements::Element,
    key::Key,
    wd::WebDriverCompatibleCommand,
    Client, ClientBuilder, Locator,
};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::HUNG;
use crate::{
    paths,
    process::{free_port, http_get, Proc},
    until,
};

/// A running chromedriver; killing its process group on drop also ends
/// every Chromium it started.
pub struct Driver {
    addr: SocketAddr,
    // Field order: the process dies before its profiles are deleted.
    _proc: Proc,
    dir: TempDir,
    sessions: AtomicU32,
}

impl Driver {
    /// Starts `chromedriver --port=P` on a free port and waits until its
    /// `/status` says ready.
    pub fn start() -> Driver {
        let dir = tempfile::Builder::new()
            .prefix("lobby-e2e-chrome-")
            .tempdir()
            .expect("temp dir");
        let port = free_port();
        let mut cmd = Command::new(chromedriver());
        cmd.arg(format!("--port={port}"));
        // Chromium's scoped directories (`org.chromium.Chromium.*`) go
        // under this driver's own directory: a browser killed rather than
        // closed leaves them behind, and they go with the directory.
        cmd.env("TMPDIR", dir.path());
        let proc = Proc::spawn("chromedriver", cmd, &dir.path().join("chromedriver.log"));
        let addr = wait_driver_ready("chromedriver", port);
        Driver {
            addr,
            _proc: proc,
            dir,
            sessions: AtomicU32::new(0),
        }
    }

    /// Opens a new browser (its own fresh profile) at 1280×800.
    pub async fn browser(&self) -> Browser {
        self.browser_with(&[]).await
    }

    /// Like [`Driver::browser`], with more Chromium switches (e.g.
    /// `--ignore-certificate-errors` for a test's self-signed certificate).
    pub async fn browser_with(&self, extra_args: &[&str]) -> Browser {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed);
        let profile = self.dir.path().join(format!("profile-{n}"));
        std::fs::create_dir_all(&profile).expect("profile dir");
        let caps = json!({
            "goog:chromeOptions": {
                "binary": chromium(),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", "--window-size=1280,800",
                    format!("--user-data-dir={}", profile.display()),
                ]
            }
        });
        let mut caps = caps;
        if let Some(args) = caps["goog:chromeOptions"]["args"].as_array_mut() {
            args.extend(extra_args.iter().map(|a| json!(a)));
        }
        Browser::session(self.addr, caps).await
    }
}

/// Waits until the WebDriver server `name` on `port` says ready on
/// `/status`; its address. A driver that never does fails the test, and
/// its [`Proc`] prints its log's tail as the panic drops it.
pub(crate) fn wait_driver_ready(name: &str, port: u16) -> SocketAddr {
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("address");
    crate::until_blocking(&format!("{name} ready on /status"), || {
        match http_get(addr, "/status") {
            Ok(r) if r.status == 200 && r.body.contains("\"ready\":true") => Ok(addr),
            seen => Err(format!("{seen:?}")),
        }
    })
}

/// The program the environment variable `var` names, else `default`:
/// where a machine keeps its browsers and their drivers.
pub(crate) fn program(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_owned())
}

fn chromedriver() -> String {
    program("CHROMEDRIVER", "chromedriver")
}

fn chromium() -> String {
    program("CHROMIUM", "/usr/bin/chromium")
}

/// One browser session.
pub struct Browser {
    pub client: Client,
}

/// A DevTools command through chromedriver's `goog/cdp/execute`.
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// A JS string literal for `s`.
pub fn js_str(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// The JS expression of a query parameter of the page's URL, decoded
/// (`null` when absent), to build larger expressions with.
pub fn param_expr(name: &str) -> String {
    format!("new URLSearchParams(location.search).get({})", js_str(name))
}

/// The JS expression counting the elements that match `css`.
pub fn count_expr(css: &str) -> String {
    format!("document.querySelectorAll({}).length", js_str(css))
}

/// A CSS attribute value in double quotes (`[data-name="…"]`).
pub fn css_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

impl Browser {
    /// A new WebDriver session with `caps` at the driver on `addr`
    /// (chromedriver or geckodriver).
    pub(crate) async fn session(addr: SocketAddr, caps: Value) -> Browser {
        let Value::Object(caps) = caps else {
            unreachable!("a JSON object")
        };
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://{addr}"))
            .await
            .unwrap_or_else(|e| panic!("WebDriver session at {addr}: {e}"));
        Browser { client }
    }

    /// Runs a Chromium DevTools command (`Browser.grantPermissions`, …).
    pub async fn cdp(&self, cmd: &'static str, params: Value) -> Value {
        self.client
            .issue_cmd(Cdp { cmd, params })
            .await
            .unwrap_or_else(|e| panic!("DevTools {cmd}: {e}"))
    }

    /// Lets the site at `origin` (`http://127.0.0.1:PORT`) show
    /// notifications, as a player's "Allow" would: the page's
    /// `Notification.requestPermission()` then answers `granted`.
    pub async fn grant_notifications(&self, origin: &str) {
        self.cdp(
            "Browser.grantPermissions",
            json!({ "origin": origin, "permissions": ["notifications"] }),
        )
        .await;
    }

    /// Navigates to `url` (a real page load, not an in-app link).
    pub async fn goto(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    /// Runs `script` (a function body; `return` a value).
    pub async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// The element matching `css`, waiting up to [`HUNG`] for it: the
    /// app renders a moment after a page load (once its wasm has started),
    /// so an element looked for right after `goto` may not be there yet.
    /// Panics when it does not appear.
    pub async fn find(&self, css: &str) -> Element {
        self.client
            .wait()
            .at_most(HUNG)
            .every(Duration::from_millis(50))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no element {css} within {HUNG:?}: {e}"))
    }

    /// Clicks the element matching `css` like a user would.
    pub async fn click(&self, css: &str) {
        self.find(css)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    /// Replaces the value of the input at `css` by typing `text`.
    pub async fn type_into(&self, css: &str, text: &str) {
        let input = self.find(css).await;
        // Emptied as a user does it (select all, delete), so the page sees
        // an input event: WebDriver's clear() changes the value without
        // one, and a render of the page between the clear and the typing
        // (a list update) puts the old text back in front of the new.
        let empty: String = [
            char::from(Key::Control),
            'a',
            char::from(Key::Null),
            char::from(Key::Backspace),
        ]
        .into_iter()
        .collect();
        input
            .send_keys(&empty)
            .await
            .unwrap_or_else(|e| panic!("empty {css}: {e}"));
        input
            .send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    /// Presses and releases `key` wherever the focus is, like a user at
    /// the keyboard (Tab moves the focus, Enter activates).
    pub async fn press(&self, key: Key) {
        let value = char::from(key);
        let keys = KeyActions::new("keyboard".to_owned())
            .then(KeyAction::Down { value })
            .then(KeyAction::Up { value });
        self.client
            .perform_actions(keys)
            .await
            .unwrap_or_else(|e| panic!("press {key:?}: {e}"));
    }

    /// The trimmed text of the first element matching `css`, if any.
    pub async fn text(&self, css: &str) -> Option<String> {
        self.js(&format!(
            "const e = document.querySelector({}); return e ? e.textContent.trim() : null;",
            js_str(css)
        ))
        .await
        .as_str()
        .map(str::to_owned)
    }

    /// An attribute of the first element matching `css`.
    pub async fn attr(&self, css: &str, name: &str) -> Option<String> {
        self.js(&format!(
            "const e = document.querySelector({}); return e ? e.getAttribute({}) : null;",
            js_str(css),
            js_str(name)
        ))
        .await
        .as_str()
        .map(str::to_owned)
    }

    /// A DOM property of the first element matching `css` (`value`,
    /// `checked`, ...), as JSON.
    pub async fn prop(&self, css: &str, name: &str) -> Value {
        self.js(&format!(
            "const e = document.querySelector({}); return e ? e[{}] : null;",
            js_str(css),
            js_str(name)
        ))
        .await
    }

    /// The status pill's text.
    pub async fn status(&self) -> String {
        self.text("[data-testid=status]").await.unwrap_or_default()
    }

    /// `location.search` (with its `?`).
    pub async fn search(&self) -> String {
        self.js("return location.search;")
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Waits until the status pill says exactly "Live".
    pub async fn wait_live(&self) {
        self.wait_status("Live").await
    }

    /// Waits until the status pill says exactly `text` ("Live (polling)",
    /// "Master unreachable", …).
    pub async fn wait_status(&self, text: &str) {
        let what = format!("the status pill to say {text:?}");
        until(&what, || async move {
            let s = self.status().await;
            if s == text {
                Ok(())
            } else {
                Err(s)
            }
        })
        .await
    }

    /// Waits until the status pill says the page lost its socket
    /// ("Reconnecting…", with or without a countdown); returns what it says.
    pub async fn wait_reconnecting(&self) -> String {
        until("the page to notice", || async {
            let s = self.status().await;
            if s.starts_with("Reconnecting") {
                Ok(s)
            } else {
                Err(s)
            }
        })
        .await
    }

    /// Opens `url` and waits until the page is live.
    pub async fn open_live(&self, url: &str) {
        self.goto(url).await;
        self.wait_live().await;
    }

    /// Reloads the page and waits until it is live again.
    pub async fn reload_live(&self) {
        self.client
            .refresh()
            .await
            .unwrap_or_else(|e| panic!("reload: {e}"));
        self.wait_live().await;
    }

    /// Waits until the text of `css` contains `needle`.
    pub async fn wait_text(&self, css: &str, needle: &str) -> String {
        let what = format!("{css} to contain {needle:?}");
        until(&what, || async move {
            match self.text(css).await {
                Some(t) if t.contains(needle) => Ok(t),
                seen => Err(format!("{seen:?}")),
            }
        })
        .await
    }

    /// Waits until no element matches `css` with text (a banner or a
    /// message gone).
    pub async fn wait_gone(&self, css: &str) {
        until(&format!("{css} to go"), || async move {
            match self.text(css).await {
                None => Ok(()),
                Some(t) => Err(t),
            }
        })
        .await
    }

    /// Evaluates the JS expression `expr` in the page.
    pub async fn eval(&self, expr: &str) -> Value {
        self.js(&format!("return {expr};")).await
    }

    /// Waits until the JS expression `expr` evaluates to `expected`.
    pub async fn wait_eq(&self, what: &str, expr: &str, expected: Value) {
        let what = format!("{what}: {expected}");
        until(&what, || {
            let expected = expected.clone();
            async move {
                let seen = self.eval(expr).await;
                if seen == expected {
                    Ok(())
                } else {
                    Err(seen.to_string())
                }
            }
        })
        .await
    }

    /// A query parameter of the page's URL, decoded (`null` when absent).
    pub async fn param(&self, name: &str) -> Value {
        self.eval(&param_expr(name)).await
    }

    /// How many elements match `css`.
    pub async fn count(&self, css: &str) -> u64 {
        self.eval(&count_expr(css))
            .await
            .as_u64()
            .unwrap_or_else(|| panic!("no count for {css}"))
    }

    /// Marks this document, so a later [`Browser::same_document`] tells
    /// whether the page was reloaded in between.
    pub async fn mark_document(&self) {
        self.js("window.__e2eMark = 'kept'; return null;").await;
    }

    /// The paths of the `.wasm` modules this document fetched: which of the
    /// front end's bundles it runs.
    pub async fn wasm_loaded(&self) -> Vec<String> {
        let got = self
            .js("return performance.getEntriesByType('resource')\
                 .map(e => new URL(e.name).pathname).filter(p => p.endsWith('.wasm'));")
            .await;
        got.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the document marked by [`Browser::mark_document`] is still
    /// the one shown (no reload, no navigation outside the app).
    pub async fn same_document(&self) -> bool {
        self.js("return window.__e2eMark === 'kept';").await == Value::Bool(true)
    }

    /// Sets the window size and waits until the page's viewport is `width`
    /// CSS pixels wide.
    pub async fn resize(&self, width: u32, height: u32) {
        self.client
            .set_window_size(width, height)
            .await
            .unwrap_or_else(|e| panic!("resize to {width}x{height}: {e}"));
        until("the viewport to resize", || async move {
            let w = self.js("return window.innerWidth;").await;
            if w.as_u64() == Some(u64::from(width)) {
                Ok(())
            } else {
                Err(format!("innerWidth {w}"))
            }
        })
        .await
    }

    /// Saves a PNG of the viewport as `target/e2e-screenshots/{name}.png`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self
            .client
            .screenshot()
            .await
            .unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
        let path = paths::screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }

    /// Ends the session, closing the browser (and so its WebSockets).
    pub async fn close(self) {
        self.client
            .close()
            .await
            .unwrap_or_else(|e| panic!("close the session: {e}"));
    }
}
