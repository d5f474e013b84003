//! Headless Chromium driven over the DevTools protocol: load a page and
//! evaluate expressions in it. Just enough to read `window.__lobbyMetrics`.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};
use tokio_tungstenite::tungstenite::Message;

use crate::{
    error::{within, Error, Result},
    ws::Ws,
};

/// The first Chromium found on `PATH`.
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// A headless Chromium with one page under remote control.
#[derive(Debug)]
pub struct Chromium {
    child: Child,
    page: Ws,
    browser_url: String,
    profile: PathBuf,
    next_id: u64,
}

impl Chromium {
    /// Starts Chromium with a fresh profile under `work`.
    pub async fn launch(bin: &Path, work: &Path) -> Result<Self> {
        let profile = work.join("chromium-profile");
        let mut child = Command::new(bin)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| Error::Unexpected("no stderr".into()))?;
        let mut lines = BufReader::new(stderr).lines();
        let browser_url = within("Chromium DevTools", async {
            while let Some(line) = lines.next_line().await? {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    return Ok(url.trim().to_owned());
                }
            }
            Err(Error::Unexpected(
                "Chromium exited before DevTools listened".into(),
            ))
        })
        .await?;
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let devtools: SocketAddr = browser_url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| Error::Unexpected(format!("DevTools URL {browser_url}")))?;
        let page_url = within("Chromium page target", async {
            loop {
                let list: Value = serde_json::from_slice(
                    &lobby_testkit::http::get_ok(devtools, "/json/list", "")
                        .await
                        .map_err(Error::Unexpected)?
                        .body,
                )?;
                let page = list.as_array().and_then(|targets| {
                    targets
                        .iter()
                        .find(|t| t["type"] == "page")
                        .and_then(|t| t["webSocketDebuggerUrl"].as_str())
                });
                if let Some(url) = page {
                    return Ok(url.to_owned());
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await?;
        let page = crate::ws::connect(&page_url).await?;
        Ok(Self {
            child,
            page,
            browser_url,
            profile,
            next_id: 1,
        })
    }

    /// Sends one DevTools command to the page and returns its `result`.
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"id": id, "method": method, "params": params});
        self.page.send(Message::text(request.to_string())).await?;
        within(method.to_owned(), async {
            loop {
                let text = crate::ws::next_text(&mut self.page).await?;
                let msg: Value = serde_json::from_str(text.as_str())?;
                if msg["id"] != id {
                    continue; // an event
                }
                if let Some(err) = msg.get("error") {
                    return Err(Error::Unexpected(format!("{method}: {err}")));
                }
                return Ok(msg["result"].clone());
            }
        })
        .await
    }

    /// Loads `url` in the page (returns once navigation started).
    pub async fn navigate(&mut self, url: &str) -> Result<()> {
        self.call("Page.navigate", json!({"url": url})).await?;
        Ok(())
    }

    /// Evaluates a JavaScript expression; its value as JSON (`null` for
    /// `undefined`).
    pub async fn eval(&mut self, expression: &str) -> Result<Value> {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
            )
            .await?;
        if let Some(ex) = result.get("exceptionDetails") {
            return Err(Error::Unexpected(format!("{expression}: {ex}")));
        }
        Ok(result["result"]
            .get("value")
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// Evaluates `expression` every 10 ms until it yields something other
    /// than `null`/`false` (failing only if the page hangs: [`within`]).
    pub async fn wait_for(&mut self, expression: &str) -> Result<Value> {
        within(format!("page: {expression}"), async {
            loop {
                match self.eval(expression).await? {
                    Value::Null | Value::Bool(false) => {}
                    v => return Ok(v),
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
    }

    /// Closes the browser (DevTools `Browser.close`, then SIGKILL if it
    /// lingers) and removes its profile.
    pub async fn close(mut self) {
        if let Ok(mut browser) = crate::ws::connect(&self.browser_url).await {
            let close = json!({"id": 1, "method": "Browser.close"}).to_string();
            let _ = browser.send(Message::text(close)).await;
        }
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
