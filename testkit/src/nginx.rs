//! nginx in front of the bridges as the benchmark and the end-to-end deploy
//! test run it: the nginx executable and its brotli_static module, a
//! self-signed certificate for 127.0.0.1, and `deploy/nginx/lobby.conf` (the
//! deployment's own proxy rules) rendered with a run's ports and paths,
//! inside an `nginx.conf` that keeps everything in the run's folder.

use std::{
    ffi::OsString,
    net::SocketAddr,
    path::{Path, PathBuf},
};

use crate::{paths, process::Proc, Error, Result};

/// The deployment's nginx config, relative to the workspace root.
pub const CONFIG: &str = "deploy/nginx/lobby.conf";

/// The deployment's config as this checkout holds it (the one the kit was
/// built from, else the current folder's), so a run renders the file
/// that ships.
pub fn template() -> Result<String> {
    let built = paths::workspace_root().join(CONFIG);
    std::fs::read_to_string(&built)
        .or_else(|_| std::fs::read_to_string(CONFIG))
        .map_err(|e| Error::Unexpected(format!("cannot read {}: {e}", built.display())))
}

/// A running nginx in front of two bridges with the deployment's own site,
/// unprivileged (everything in its folder) and killed with its workers on
/// drop: the one launcher of the benchmark and the end-to-end deploy test.
pub struct Nginx {
    /// The site's main listener: HTTPS, or plain HTTP without `tls`.
    pub main: SocketAddr,
    /// The port-80 server's listener (it redirects to HTTPS).
    pub redirect: SocketAddr,
    /// Its folder: config, certificate, logs (`error.log`, `nginx.out`).
    pub dir: PathBuf,
    tls: bool,
    _proc: Proc,
}

impl Nginx {
    /// Renders [`CONFIG`] into `dir` for `bridges`, serving `root`, with a
    /// self-signed certificate and two free ports, inside `main`; checks it
    /// with `nginx -t`, starts nginx in the foreground and waits (bounded by
    /// [`crate::HUNG`], blocking) until it accepts TCP on its main port.
    /// `(nginx, module)` is what [`find`] returned.
    pub fn start(
        (nginx, module): &(PathBuf, PathBuf),
        dir: &Path,
        tls: bool,
        bridges: [SocketAddr; 2],
        root: &Path,
        main: &Main,
    ) -> Result<Nginx> {
        std::fs::create_dir_all(dir)?;
        let (cert, key) = self_signed(dir)?;
        let port = || -> SocketAddr {
            (std::net::Ipv4Addr::LOCALHOST, crate::process::free_port()).into()
        };
        let (listen, redirect) = (port(), port());
        // nginx resolves a relative root against its prefix, not here.
        let root = std::path::absolute(root)?;
        let site = Site {
            main: listen,
            tls,
            redirect,
            bridges,
            cert: &cert,
            key: &key,
            root: &root,
        }
        .render(&template()?)?;
        let args = main.write(dir, module, &site)?;
        crate::process::output(
            &format!("nginx -t on the rendered {CONFIG}"),
            std::process::Command::new(nginx).args(&args).arg("-t"),
        )?;
        let mut cmd = std::process::Command::new(nginx);
        cmd.args(&args).args(["-g", "daemon off;"]);
        let mut proc = Proc::try_spawn("nginx", cmd, &dir.join("nginx.out"))?;
        let d = dir.display();
        let start = std::time::Instant::now();
        while std::net::TcpStream::connect(listen).is_err() {
            if let Some(status) = proc.exit_status() {
                return Err(Error::Unexpected(format!(
                    "nginx exited ({status}); see {d}/error.log and {d}/nginx.out"
                )));
            }
            if start.elapsed() >= crate::HUNG {
                return Err(Error::Unexpected(format!(
                    "nginx did not accept on {listen} within {:?}; see {d}/error.log",
                    crate::HUNG
                )));
            }
            std::thread::sleep(crate::POLL);
        }
        Ok(Nginx {
            main: listen,
            redirect,
            dir: dir.to_path_buf(),
            tls,
            _proc: proc,
        })
    }

    /// `https://MAIN{path}` (`http://` without TLS): where a browser goes.
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{path}", self.main)
    }

    /// The requests nginx logged so far (with [`Main::access_log`]).
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default()
    }
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
    crate::process::output(
        "openssl req (Debian package openssl)",
        std::process::Command::new("openssl")
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
            .arg("ec_paramgen_curve:prime256v1")
            .args(["-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"])
            .args(["-addext", "subjectAltName=IP:127.0.0.1", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert),
    )?;
    Ok((cert, key))
}

/// The ports and paths a run puts into `deploy/nginx/lobby.conf`. The
/// benchmark and the end-to-end deploy test (tests/tests/e2e/deploy.rs) both
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

/// How a run's `nginx.conf` differs between the benchmark (many
/// connections, quiet logs) and the deploy test (one worker, an access log
/// it reads). Everything else is the same: the brotli module loaded by
/// path, and the pid file, logs and temporary files in the run's folder, so
/// nginx runs unprivileged and touches nothing global.
#[derive(Debug)]
pub struct Main {
    /// `worker_processes` (`auto`, `1`).
    pub workers: &'static str,
    /// `worker_rlimit_nofile`, when the run holds more descriptors than
    /// the default limit allows.
    pub nofile: Option<usize>,
    /// The level of `error.log` (`warn`, `info`).
    pub error_level: &'static str,
    pub worker_connections: usize,
    /// Requests logged to `access.log`, or `access_log off`.
    pub access_log: bool,
}

impl Main {
    /// Writes `site` (a rendered [`Site`]) as `dir/lobby.conf`, the
    /// `nginx.conf` that includes it and its `tmp/` folder; returns the
    /// arguments (`-p`, `-c`, `-e`) that run nginx on them.
    pub fn write(&self, dir: &Path, module: &Path, site: &str) -> Result<Vec<OsString>> {
        std::fs::create_dir_all(dir.join("tmp"))?;
        std::fs::write(dir.join("lobby.conf"), site)?;
        let d = dir.display();
        let nofile = self
            .nofile
            .map(|n| format!("worker_rlimit_nofile {n};\n"))
            .unwrap_or_default();
        let access_log = if self.access_log {
            format!("{d}/access.log")
        } else {
            "off".to_owned()
        };
        let main = format!(
            "load_module {module};\n\
             worker_processes {workers};\n\
             {nofile}\
             pid {d}/nginx.pid;\n\
             error_log {d}/error.log {level};\n\
             events {{ worker_connections {worker_connections}; }}\n\
             http {{\n\
             \x20   types {{ text/html html; text/css css; application/javascript js; \
             application/wasm wasm; }}\n\
             \x20   default_type application/octet-stream;\n\
             \x20   access_log {access_log};\n\
             \x20   client_body_temp_path {d}/tmp/body;\n\
             \x20   proxy_temp_path {d}/tmp/proxy;\n\
             \x20   fastcgi_temp_path {d}/tmp/fastcgi;\n\
             \x20   uwsgi_temp_path {d}/tmp/uwsgi;\n\
             \x20   scgi_temp_path {d}/tmp/scgi;\n\
             \x20   include {d}/lobby.conf;\n\
             }}\n",
            module = module.display(),
            workers = self.workers,
            level = self.error_level,
            worker_connections = self.worker_connections,
        );
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, main)?;
        Ok(vec![
            "-p".into(),
            format!("{d}/").into(),
            "-c".into(),
            conf.into(),
            "-e".into(),
            dir.join("error.log").into(),
        ])
    }
}
