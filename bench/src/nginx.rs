//! nginx in front of the benchmark's bridges, configured from
//! `deploy/nginx/lobby.conf` (the deployment's own proxy rules, rendered
//! with the run's ports and paths) and started unprivileged: prefix, pid
//! file, logs and temporary files in the run's work directory. The listener
//! is plain HTTP (the load generator has no TLS client); the end-to-end
//! test (tests/tests/deploy.rs) covers the TLS side.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use tokio::{
    net::TcpStream,
    process::{Child, Command},
};

use crate::error::{within, Error, Result};

/// The deployment's nginx config, relative to the workspace root.
pub const CONFIG: &str = "deploy/nginx/lobby.conf";

/// A running nginx; stopped on drop.
#[derive(Debug)]
pub struct Nginx {
    /// Where browsers (here: the load generator) connect.
    pub addr: SocketAddr,
    child: Child,
}

/// The nginx executable and its brotli_static module, or why the phase
/// cannot run (what to install).
pub fn find() -> std::result::Result<(PathBuf, PathBuf), String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let nginx = std::env::var_os("NGINX")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::split_paths(&path)
                .chain([PathBuf::from("/usr/sbin")])
                .map(|d| d.join("nginx"))
                .find(|p| p.is_file())
        })
        .ok_or("nginx is missing (bash scripts/setup.sh test installs it)")?;
    let module = std::env::var_os("LOBBY_NGINX_BROTLI_MODULE")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so".into());
    if !module.is_file() {
        return Err(format!(
            "{} is missing (Debian: libnginx-mod-http-brotli-static)",
            module.display()
        ));
    }
    Ok((nginx, module))
}

/// A self-signed certificate for 127.0.0.1 and its key, written into
/// `dir` as `cert.pem` and `key.pem` (openssl, Debian package `openssl`).
pub fn self_signed(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let status = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .arg("ec_paramgen_curve:prime256v1")
        .args(["-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| Error::Unexpected(format!("openssl (Debian package openssl): {e}")))?;
    if !status.success() {
        return Err(Error::Unexpected(format!("openssl req failed: {status}")));
    }
    Ok((cert, key))
}

/// The ports and paths a run puts into `deploy/nginx/lobby.conf`. The
/// benchmark and the end-to-end deploy test (tests/tests/deploy.rs) both
/// render the deployment's own file with it, so the file's fixed values
/// (listen lines, the upstream's servers, certificate paths, root) are
/// named in one place.
#[derive(Debug)]
pub struct Site<'a> {
    /// The HTTPS server's listener; with `tls` false it speaks plain HTTP
    /// (the certificate is still loaded, but unused).
    pub main: SocketAddr,
    pub tls: bool,
    /// The port-80 server (redirects to HTTPS).
    pub redirect: SocketAddr,
    /// The upstream's two bridges, in the file's order.
    pub bridges: [SocketAddr; 2],
    pub cert: &'a Path,
    pub key: &'a Path,
    /// The front end nginx serves (absolute: nginx resolves a relative
    /// root against its prefix).
    pub root: &'a Path,
}

impl Site<'_> {
    /// `template` with this site's values; fails when a value it replaces
    /// is not in the template exactly once (an edit of the deployed file
    /// that would otherwise go silently unrendered).
    pub fn render(&self, template: &str) -> Result<String> {
        let main = if self.tls {
            format!("listen {} ssl http2;", self.main)
        } else {
            format!("listen {};", self.main)
        };
        let mut subs: Vec<(String, String)> = vec![
            ("listen 443 ssl http2;".into(), main),
            ("listen [::]:443 ssl http2;".into(), String::new()),
            ("listen 80;".into(), format!("listen {};", self.redirect)),
            ("listen [::]:80;".into(), String::new()),
        ];
        for (default, bridge) in ["127.0.0.1:8081", "127.0.0.1:8082"]
            .into_iter()
            .zip(self.bridges)
        {
            for rest in ["max_fails", "backup"] {
                subs.push((
                    format!("server {default} {rest}"),
                    format!("server {bridge} {rest}"),
                ));
            }
        }
        subs.extend([
            (
                "/etc/letsencrypt/live/lobby.example.org/fullchain.pem".into(),
                self.cert.display().to_string(),
            ),
            (
                "/etc/letsencrypt/live/lobby.example.org/privkey.pem".into(),
                self.key.display().to_string(),
            ),
            (
                "root /opt/lobby/dist;".into(),
                format!("root {};", self.root.display()),
            ),
        ]);
        let mut out = template.to_owned();
        for (from, to) in subs {
            let n = out.matches(&from).count();
            if n != 1 {
                return Err(Error::Unexpected(format!(
                    "{CONFIG}: expected {from:?} exactly once, found it {n} times"
                )));
            }
            out = out.replace(&from, &to);
        }
        Ok(out)
    }
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
        std::fs::create_dir_all(dir.join("tmp"))?;
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
        std::fs::write(dir.join("lobby.conf"), site)?;
        // Each proxied WebSocket holds two descriptors in nginx.
        let worker_connections = connections * 2 + 256;
        let d = dir.display();
        let main = format!(
            "load_module {module};\n\
             worker_processes auto;\n\
             worker_rlimit_nofile {nofile};\n\
             pid {d}/nginx.pid;\n\
             error_log {d}/error.log warn;\n\
             events {{ worker_connections {worker_connections}; }}\n\
             http {{\n\
             \x20   types {{ text/html html; text/css css; application/javascript js; \
             application/wasm wasm; }}\n\
             \x20   access_log off;\n\
             \x20   client_body_temp_path {d}/tmp/body;\n\
             \x20   proxy_temp_path {d}/tmp/proxy;\n\
             \x20   fastcgi_temp_path {d}/tmp/fastcgi;\n\
             \x20   uwsgi_temp_path {d}/tmp/uwsgi;\n\
             \x20   scgi_temp_path {d}/tmp/scgi;\n\
             \x20   include {d}/lobby.conf;\n\
             }}\n",
            module = module.display(),
            nofile = worker_connections + 64,
        );
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, main)?;
        let child = Command::new(nginx)
            .arg("-p")
            .arg(format!("{d}/"))
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(dir.join("error.log"))
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
