//! The product under test as real processes: the `bridge` binary serving
//! `dist/` with an admin token file, with its embedded master or next to a
//! separate `master` process (which survives a bridge restart).

use std::{
    ffi::{OsStr, OsString},
    net::SocketAddr,
};

use tempfile::TempDir;

use crate::{
    launch::{any_port, BridgeLaunch, FeedListen, MasterFeed, MasterLaunch},
    paths,
    process::Proc,
};

pub use crate::launch::ADMIN_TOKEN;

/// The product under test: a running bridge (and maybe master); everything
/// is killed on drop.
pub struct Product {
    /// Bridge HTTP address (the page, `/ws`).
    pub http: SocketAddr,
    /// Master TCP address (where game servers register).
    pub master: SocketAddr,
    bridge: Option<Proc>,
    /// The separate master, when the bridge does not embed one.
    external_master: Option<Proc>,
    restarts: u32,
    /// Master restarts so far (each gets its own log).
    master_restarts: u32,
    /// The bridge relays to a master it did not start (`--master`).
    relay: bool,
    /// More bridge arguments, kept for a restart.
    extra_args: Vec<OsString>,
    /// Where the separate master serves its change feed, when the bridge
    /// follows one ([`Product::following_feed`]).
    feed: Option<SocketAddr>,
    /// The change feed the bridge follows (`--master-feed`), kept for a
    /// restart; `None`: it polls its master.
    followed_feed: Option<SocketAddr>,
    dir: TempDir,
}

impl Product {
    /// The bridge with its embedded master, both on free ports.
    pub fn start() -> Product {
        Self::launch(false, Vec::new())
    }

    /// Like [`Product::start`], with more bridge arguments (other games'
    /// sources, `--hide-addresses`, …) after the harness's own.
    pub fn start_with<S: AsRef<OsStr>>(args: &[S]) -> Product {
        Self::launch(false, args.iter().map(|a| a.as_ref().to_owned()).collect())
    }

    /// A `master` process and a bridge relaying to it, so the bridge can be
    /// restarted while the game servers stay registered.
    pub fn start_with_separate_master() -> Product {
        Self::launch(true, Vec::new())
    }

    /// A bridge relaying to `master`, whatever listens there (nothing yet,
    /// or a fake master in the test). [`Product::start_master`] can start a
    /// real master at that address later.
    pub fn start_relaying_to(master: SocketAddr) -> Product {
        let mut product = Self::unstarted(master, true, scratch_dir("lobby-e2e-"));
        product.start_bridge(any_port(), Some(master));
        product
    }

    /// A product whose master is (or will be) at `master`, relayed to
    /// when `relay`, nothing started yet, its files in `dir`.
    fn unstarted(master: SocketAddr, relay: bool, dir: TempDir) -> Product {
        Product {
            http: any_port(),
            master,
            bridge: None,
            external_master: None,
            restarts: 0,
            master_restarts: 0,
            relay,
            extra_args: Vec::new(),
            feed: None,
            followed_feed: None,
            dir,
        }
    }

    /// A master with its change feed and a bridge following it, on ports
    /// picked now, so either can start first and restart in place;
    /// nothing runs yet ([`Product::start_master`],
    /// [`Product::start_bridge_following`]).
    pub fn following_feed() -> Product {
        let port = || {
            format!("127.0.0.1:{}", crate::process::free_port())
                .parse()
                .expect("address")
        };
        Product {
            feed: Some(port()),
            ..Self::unstarted(port(), true, scratch_dir("lobby-e2e-feed-"))
        }
    }

    /// [`Product::following_feed`] with both running, the bridge following
    /// the feed.
    pub async fn start_following_feed() -> Product {
        let mut product = Self::following_feed();
        product.start_master();
        product.start_bridge_following(product.feed());
        product.wait_feed_up(true).await;
        product
    }

    /// Where the master serves its change feed; panics unless the product
    /// was made by [`Product::following_feed`].
    pub fn feed(&self) -> SocketAddr {
        self.feed
            .expect("a product made by Product::following_feed")
    }

    /// Starts the bridge following the change feed at `feed` (the
    /// master's, or a proxy in front of it).
    pub fn start_bridge_following(&mut self, feed: SocketAddr) {
        assert!(self.bridge.is_none(), "the bridge is running");
        self.followed_feed = Some(feed);
        self.start_bridge(any_port(), Some(self.master));
    }

    /// Waits until the bridge follows the master's feed (`up`) or polls
    /// (`bridge_master_feed_up`); how long that took.
    pub async fn wait_feed_up(&self, up: bool) -> std::time::Duration {
        let want = f64::from(u8::from(up));
        crate::timed(crate::metrics::until_metric(
            self.http,
            "bridge_master_feed_up",
            |v| v == want,
        ))
        .await
    }

    /// One sample of the bridge's `/metrics` (`name` with its labels).
    pub async fn metric(&self, name: &str) -> f64 {
        crate::metrics::metric(self.http, name).await
    }

    fn launch(separate: bool, extra_args: Vec<OsString>) -> Product {
        let dir = scratch_dir("lobby-e2e-");
        let external_master = separate.then(|| {
            MasterLaunch::new(paths::binary("master"))
                .start(&dir.path().join("master.log"))
                .unwrap_or_else(|e| panic!("{e}"))
        });
        let (external_master, master_arg) = match external_master {
            Some(m) => (Some(m.proc), Some(m.addr)),
            None => (None, None),
        };
        let mut product = Product {
            external_master,
            extra_args,
            ..Self::unstarted(any_port(), separate, dir)
        };
        product.start_bridge(any_port(), master_arg);
        product
    }

    fn start_bridge(&mut self, listen: SocketAddr, master: Option<SocketAddr>) {
        let dir = self.dir.path();
        let log = dir.join(format!("bridge-{}.log", self.restarts));
        let mut launch = BridgeLaunch::new(
            paths::binary("bridge"),
            paths::dist_dir(),
            dir.join("admin-token"),
        );
        // History and key secret in the lobby's own folder, kept across
        // restarts of the bridge, never in the source tree.
        launch.data_dir = Some(self.data_dir());
        launch.listen = listen;
        launch.master = master;
        launch.master_feed = self.followed_feed.map_or(MasterFeed::Off, MasterFeed::At);
        // Every page and viewer of a test comes from 127.0.0.1 (the
        // launcher lifts the budget of whole lists); a test of that budget
        // sets its own.
        if self.extra_args.iter().any(|a| a == "--api-rate") {
            launch.api_rate = None;
        }
        launch.args.clone_from(&self.extra_args);
        let bridge = launch.start(&log).unwrap_or_else(|e| panic!("{e}"));
        self.http = bridge.http;
        self.master = bridge.master;
        self.bridge = Some(bridge.proc);
    }

    /// `http://ADDR{path}`.
    /// The key `/api/servers` gives the server called `name`, once the
    /// bridge lists it.
    pub async fn key_of(&self, name: &str) -> String {
        let what = format!("{name} in /api/servers");
        crate::until(&what, || async {
            let v = crate::http::get(self.http, "/api/servers", "")
                .await?
                .json();
            v["servers"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|s| s["name"] == name)
                .and_then(|s| s["key"].as_str())
                .map(str::to_owned)
                .ok_or_else(|| v.to_string())
        })
        .await
    }

    /// The bridge's data directory (its key secret and history database).
    pub fn data_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("data")
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.http)
    }

    /// Kills the bridge (SIGKILL, like a crash); the separate master, if
    /// any, keeps running.
    pub fn kill_bridge(&mut self) {
        if let Some(mut b) = self.bridge.take() {
            b.kill();
        }
    }

    /// Starts the bridge again on the same HTTP port and the same master.
    /// Only with a separate master: an embedded one died with the bridge.
    pub fn restart_bridge(&mut self) {
        assert!(
            self.relay,
            "restart needs start_with_separate_master() or start_relaying_to()"
        );
        self.kill_bridge();
        self.restarts += 1;
        let listen = self.http;
        self.start_bridge(listen, Some(self.master));
        assert_eq!(self.http, listen, "the bridge moved");
    }

    /// Stops the bridge with SIGTERM and waits for it to exit; panics
    /// unless it exits 0 (or still runs after [`crate::HUNG`]). The
    /// separate master keeps running.
    pub fn terminate_bridge(&mut self) {
        let Some(mut bridge) = self.bridge.take() else {
            return;
        };
        bridge.signal(libc::SIGTERM);
        match bridge.wait_exit() {
            Some(status) if status.success() => {}
            other => panic!(
                "the bridge did not exit 0 after SIGTERM ({other:?}); its log:\n{}",
                bridge.log_tail()
            ),
        }
    }

    /// Starts the bridge again on the same HTTP port and master, after
    /// [`Product::terminate_bridge`] or [`Product::kill_bridge`].
    pub fn start_bridge_again(&mut self) {
        assert!(self.bridge.is_none(), "the bridge is still running");
        self.restart_bridge();
    }

    /// Kills the separate master (SIGKILL: a crash); its game servers'
    /// connections drop with it.
    pub fn kill_master(&mut self) {
        if let Some(mut m) = self.external_master.take() {
            m.kill();
        }
    }

    /// Starts a real master at [`Product::master`] (after
    /// [`Product::kill_master`], or where [`Product::start_relaying_to`] pointed
    /// the bridge) and waits for its ready line.
    pub fn start_master(&mut self) {
        self.start_master_at(self.master);
    }

    /// Starts a real master listening at `listen`, which may differ from
    /// where the bridge connects (a proxy in between).
    pub fn start_master_at(&mut self, listen: SocketAddr) {
        assert!(
            self.relay,
            "the embedded master cannot be started separately"
        );
        assert!(self.external_master.is_none(), "a master is running");
        let log = self
            .dir
            .path()
            .join(format!("master-{}.log", self.master_restarts));
        self.master_restarts += 1;
        let mut launch = MasterLaunch::new(paths::binary("master"));
        launch.listen = listen;
        if let Some(feed) = self.feed {
            launch.feed = FeedListen::At(feed);
        }
        let master = launch.start(&log).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(master.addr, listen, "the master moved");
        self.external_master = Some(master.proc);
    }

    /// Freezes the separate master (SIGSTOP): it holds its connections but
    /// answers nothing, like a hung process.
    pub fn pause_master(&self) {
        if let Some(m) = &self.external_master {
            m.signal(libc::SIGSTOP);
        }
    }

    /// Lets a paused master run again (SIGCONT).
    pub fn resume_master(&self) {
        if let Some(m) = &self.external_master {
            m.signal(libc::SIGCONT);
        }
    }

    /// The bridge's `bridge_connections{role="ROLE"}` (`viewer`, `admin`).
    pub fn connections(&self, role: &str) -> Result<i64, String> {
        connections(self.http, role)
    }

    /// The bridge's `/healthz` body and status (`"up"`/`"down"` in it).
    pub fn healthz(&self) -> Result<crate::process::HttpResponse, String> {
        crate::process::http_get(self.http, "/healthz")
    }

    /// The last lines of the running bridge's log (for a drill's report).
    pub fn bridge_log_tail(&self) -> String {
        self.bridge.as_ref().map(Proc::log_tail).unwrap_or_default()
    }

    /// The running bridge's whole log so far (to count what it said).
    pub fn bridge_log(&self) -> String {
        let log = self
            .dir
            .path()
            .join(format!("bridge-{}.log", self.restarts));
        std::fs::read_to_string(log).unwrap_or_default()
    }

    /// The bridge's process id (to tell a restart happened).
    pub fn bridge_pid(&self) -> Option<u32> {
        self.bridge.as_ref().map(Proc::pid)
    }
}

/// The `bridge_connections{role="ROLE"}` gauge of the bridge at `http`
/// (from its `/metrics`): how many sockets of that role it holds.
pub fn connections(http: SocketAddr, role: &str) -> Result<i64, String> {
    let r = crate::process::http_get(http, "/metrics")?;
    let name = format!("bridge_connections{{role=\"{role}\"}}");
    crate::metrics::sample(&r.body, &name)
        .map(|v| v as i64)
        .ok_or_else(|| format!("no {name} in /metrics"))
}

/// A scratch directory named `prefix…` holding the admin's token file
/// (`admin-token`, [`ADMIN_TOKEN`]), as a bridge of a test is given it;
/// removed on drop.
pub fn scratch_dir(prefix: &str) -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("temp dir");
    crate::launch::write_admin_token(dir.path()).expect("write the token file");
    dir
}
