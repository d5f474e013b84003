//! Headless Firefox ESR over WebDriver (a `geckodriver` child process), for
//! what only Firefox lets a test reach without the internet: its Web Push
//! client, pointed at a push service on loopback ([`crate::push_service`]).
//! Every preference that would make it phone home points at a dead
//! loopback port or is off, so no packet leaves the machine.

use std::{net::SocketAddr, process::Command};

use serde_json::{json, Value};
use tempfile::TempDir;

use crate::{
    browser::{wait_driver_ready, Browser},
    process::{free_port, Proc},
};
/// A loopback port nothing listens on: where Firefox's own services go.
const DEAD: &str = "http://127.0.0.1:9/";

/// A running geckodriver; killing its process group on drop also ends the
/// Firefox it started.
pub struct Gecko {
    addr: SocketAddr,
    _proc: Proc,
    _dir: TempDir,
}

fn geckodriver() -> String {
    crate::browser::program("GECKODRIVER", "geckodriver")
}

fn firefox() -> String {
    crate::browser::program("FIREFOX", "/usr/bin/firefox-esr")
}

/// Firefox's preferences for a test: offline except for loopback, and its
/// push client talking to `push_server` (`ws://127.0.0.1:PORT/`) with
/// notifications allowed without a prompt.
pub fn prefs(push_server: &str) -> Value {
    json!({
        // Web Push through the test's push service.
        "dom.push.enabled": true,
        "dom.push.connection.enabled": true,
        "dom.push.serverURL": push_server,
        "dom.push.testing.allowInsecureServerURL": true,
        "dom.serviceWorkers.enabled": true,
        "permissions.default.desktop-notification": 1,
        // Firefox's own notification windows, not the desktop's (none here).
        "alerts.useSystemBackend": false,
        // Nothing leaves loopback.
        "network.proxy.type": 1,
        "network.proxy.http": "127.0.0.1", "network.proxy.http_port": 9,
        "network.proxy.ssl": "127.0.0.1", "network.proxy.ssl_port": 9,
        "network.proxy.socks": "127.0.0.1", "network.proxy.socks_port": 9,
        "network.proxy.allow_hijacking_localhost": false,
        "network.trr.mode": 5,
        "network.dns.forceResolve": "127.0.0.1",
        "network.captive-portal-service.enabled": false,
        "network.connectivity-service.enabled": false,
        "network.prefetch-next": false,
        "network.dns.disablePrefetch": true,
        "services.settings.server": DEAD,
        "browser.region.network.url": "",
        "browser.safebrowsing.malware.enabled": false,
        "browser.safebrowsing.phishing.enabled": false,
        "browser.safebrowsing.downloads.enabled": false,
        "browser.safebrowsing.provider.mozilla.updateURL": DEAD,
        "toolkit.telemetry.enabled": false,
        "toolkit.telemetry.unified": false,
        "toolkit.telemetry.server": DEAD,
        "datareporting.healthreport.uploadEnabled": false,
        "datareporting.policy.dataSubmissionEnabled": false,
        "app.normandy.enabled": false,
        "app.normandy.api_url": DEAD,
        "app.update.enabled": false,
        "app.update.auto": false,
        "extensions.update.enabled": false,
        "extensions.getAddons.cache.enabled": false,
        "browser.newtabpage.enabled": false,
        "browser.startup.homepage": "about:blank",
        "browser.shell.checkDefaultBrowser": false,
    })
}

impl Gecko {
    /// Starts `geckodriver --port=P` on a free port and waits until its
    /// `/status` says ready.
    pub fn start() -> Gecko {
        let dir = tempfile::Builder::new()
            .prefix("lobby-e2e-firefox-")
            .tempdir()
            .expect("temp dir");
        let port = free_port();
        let mut cmd = Command::new(geckodriver());
        cmd.arg(format!("--port={port}"))
            .arg("--host=127.0.0.1")
            .env("TMPDIR", dir.path())
            .env("MOZ_HEADLESS", "1");
        let proc = Proc::spawn("geckodriver", cmd, &dir.path().join("geckodriver.log"));
        let addr = wait_driver_ready("geckodriver", port);
        Gecko {
            addr,
            _proc: proc,
            _dir: dir,
        }
    }

    /// Opens headless Firefox (a fresh profile) with [`prefs`] for
    /// `push_server`.
    pub async fn browser(&self, push_server: &str) -> Browser {
        let caps = json!({
            "moz:firefoxOptions": {
                "binary": firefox(),
                "args": ["-headless"],
                "prefs": prefs(push_server),
            }
        });
        Browser::session(self.addr, caps).await
    }
}
