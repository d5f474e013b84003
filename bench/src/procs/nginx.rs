//! nginx in front of the benchmark's bridges, configured from
//! `deploy/nginx/lobby.conf` (the deployment's own proxy rules, rendered
//! with the run's ports and paths by [`lobby_testkit::nginx::Site`]) and
//! started unprivileged: prefix, pid file, logs and temporary files in the
//! run's work directory. The listener is plain HTTP (the load generator has
//! no TLS client); the end-to-end test (tests/tests/e2e/deploy.rs) covers the
//! TLS side.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use lobby_testkit::nginx::{self_signed, Main, Site, CONFIG};
use tokio::{
    net::TcpStream,
    process::{Child, Command},
};

use crate::error::{within, Error, Result};

/// A running nginx; stopped on drop.
#[derive(Debug)]
pub struct Nginx {
    /// Where browsers (here: the load generator) connect.
    pub addr: SocketAddr,
    child: Child,
}

impl Nginx {
    /// Renders the config for `bridges` into `work`, serving `dist`, with
    /// room for `connections` client connections, and starts nginx on a
    /// free port; ready when it accepts TCP.
    pub async fn start(
        (nginx, module): &(PathBuf, PathBuf),
        work: &Path,
        dist: &Path,
        bridges: [SocketAddr; 2],
        connections: usize,
    ) -> Result<Nginx> {
        // The checkout this loadgen was built from, else the current one.
        let built = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(CONFIG);
        let template = std::fs::read_to_string(&built)
            .or_else(|_| std::fs::read_to_string(CONFIG))
            .map_err(|e| Error::Unexpected(format!("cannot read {CONFIG}: {e}")))?;
        // nginx resolves a relative root against its prefix, not here.
        let dist = std::path::absolute(dist)?;
        let dir = work.join("nginx");
        std::fs::create_dir_all(&dir)?;
        let (cert, key) = self_signed(&dir)?;
        let addr: SocketAddr = {
            let l = std::net::TcpListener::bind("127.0.0.1:0")?;
            l.local_addr()?
        };
        let http: SocketAddr = {
            let l = std::net::TcpListener::bind("127.0.0.1:0")?;
            l.local_addr()?
        };
        let site = Site {
            main: addr,
            tls: false,
            redirect: http,
            bridges,
            cert: &cert,
            key: &key,
            root: &dist,
        }
        .render(&template)?;
        // Each proxied WebSocket holds two descriptors in nginx.
        let worker_connections = connections * 2 + 256;
        let args = Main {
            workers: "auto",
            nofile: Some(worker_connections + 64),
            error_level: "warn",
            worker_connections,
            access_log: false,
        }
        .write(&dir, module, &site)?;
        let d = dir.display();
        let child = Command::new(nginx)
            .args(args)
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("nginx.out"))?)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| Error::Unexpected(format!("cannot start {}: {e}", nginx.display())))?;
        let mut proxy = Nginx { addr, child };
        let started = within(Duration::from_secs(10), "nginx accepting", async {
            loop {
                if TcpStream::connect(addr).await.is_ok() {
                    return Ok(());
                }
                if let Ok(Some(status)) = proxy.child.try_wait() {
                    return Err(Error::Unexpected(format!(
                        "nginx exited ({status}); see {d}/error.log and {d}/nginx.out"
                    )));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        started.map(|()| proxy)
    }

    /// SIGTERM (nginx's fast shutdown), then SIGKILL after 5 s.
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id().and_then(|p| libc::pid_t::try_from(p).ok()) {
            // SAFETY: kill(2) on our own child's pid; no memory effects.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}
