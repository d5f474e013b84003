//! The deployment's own `deploy/nginx/lobby.conf` renders with a run's
//! values, the `nginx.conf` around it keeps everything in the run's
//! folder, and the one launcher starts nginx on it and stops it.

use std::{net::SocketAddr, path::Path};

use lobby_testkit::{
    nginx::{self, Main, Nginx, Site, CONFIG},
    process::{free_port, http_get},
    until_blocking,
};

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("an address")
}

fn deployed() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(CONFIG);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A run on 127.0.0.1:4431 (redirect 8001), bridges 9001 and 9002, its
/// files in /run/t.
fn site(tls: bool) -> Site<'static> {
    Site {
        main: addr("127.0.0.1:4431"),
        tls,
        redirect: addr("127.0.0.1:8001"),
        bridges: [addr("127.0.0.1:9001"), addr("127.0.0.1:9002")],
        cert: Path::new("/run/t/cert.pem"),
        key: Path::new("/run/t/key.pem"),
        root: Path::new("/run/t/dist"),
    }
}

#[test]
fn the_deployed_config_renders_with_the_runs_ports_and_paths() {
    let out = site(true).render(&deployed()).expect("renders");
    for wanted in [
        "listen 127.0.0.1:4431 ssl http2;",
        "listen 127.0.0.1:8001;",
        "server 127.0.0.1:9001 max_fails",
        "server 127.0.0.1:9002 max_fails",
        "/run/t/cert.pem",
        "/run/t/key.pem",
        "root /run/t/dist;",
    ] {
        assert!(out.contains(wanted), "{wanted:?} missing in\n{out}");
    }
    for gone in [
        "listen 443",
        "listen 80;",
        "127.0.0.1:8081",
        "/etc/letsencrypt",
    ] {
        assert!(!out.contains(gone), "{gone:?} left in\n{out}");
    }
}

#[test]
fn a_value_the_template_lacks_is_an_error_not_a_silent_skip() {
    let edited = deployed().replace("listen 80;", "listen 8080;");
    let err = site(false)
        .render(&edited)
        .expect_err("a missing listen line");
    assert!(err.to_string().contains("listen 80;"), "{err}");
}

#[test]
fn the_main_config_keeps_pid_logs_and_temporary_files_in_the_runs_folder() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let dir = tmp.path().join("nginx");
    let main = Main {
        workers: "1",
        nofile: Some(1000),
        error_level: "info",
        worker_connections: 512,
        access_log: true,
    };
    let args = main
        .write(&dir, Path::new("/m/brotli.so"), "# site\n")
        .expect("written");
    let conf = std::fs::read_to_string(dir.join("nginx.conf")).expect("nginx.conf");
    let site = std::fs::read_to_string(dir.join("lobby.conf")).expect("lobby.conf");
    let d = dir.display();
    assert_eq!(site, "# site\n");
    assert!(dir.join("tmp").is_dir(), "no tmp/ folder");
    for wanted in [
        "load_module /m/brotli.so;".to_owned(),
        "worker_processes 1;".to_owned(),
        "worker_rlimit_nofile 1000;".to_owned(),
        format!("pid {d}/nginx.pid;"),
        format!("error_log {d}/error.log info;"),
        "worker_connections 512;".to_owned(),
        format!("access_log {d}/access.log;"),
        format!("proxy_temp_path {d}/tmp/proxy;"),
        format!("include {d}/lobby.conf;"),
    ] {
        assert!(conf.contains(&wanted), "{wanted:?} missing in\n{conf}");
    }
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        args,
        [
            "-p".to_owned(),
            format!("{d}/"),
            "-c".to_owned(),
            format!("{d}/nginx.conf"),
            "-e".to_owned(),
            format!("{d}/error.log"),
        ]
    );
}

#[test]
fn the_launcher_serves_the_deployed_site_with_tls_and_stops_nginx_on_drop() {
    let found = nginx::find().unwrap_or_else(|why| {
        panic!("{why}: `bash scripts/setup.sh test` installs nginx and its brotli module")
    });
    let tmp = tempfile::tempdir().expect("a temp dir");
    // nginx's workers drop root (to nobody) when the test runs as root.
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod the temp dir");
    let root = tmp.path().join("dist");
    std::fs::create_dir_all(&root).expect("the root folder");
    // Nothing listens at the bridges: the redirect needs none.
    let bridges = [free_port(), free_port()].map(|p| addr(&format!("127.0.0.1:{p}")));
    let main = Main {
        workers: "1",
        nofile: None,
        error_level: "info",
        worker_connections: 64,
        access_log: true,
    };
    let proxy = Nginx::start(
        &found,
        &tmp.path().join("nginx"),
        true,
        bridges,
        &root,
        &main,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(proxy.url("/admin").starts_with("https://127.0.0.1:"));

    // The port-80 server only redirects to https://, and logs it.
    let redirect = http_get(proxy.redirect, "/admin").expect("GET http:// /admin");
    assert_eq!(redirect.status, 301, "{redirect:?}");
    assert!(
        redirect.head_contains("location: https://"),
        "{}",
        redirect.head
    );
    until_blocking("the redirect in the access log", || {
        let log = proxy.access_log();
        if log.contains("\"GET /admin HTTP/1.1\" 301 ") {
            Ok(())
        } else {
            Err(log)
        }
    });

    // Dropped, nginx and its workers are gone: nothing accepts any more.
    let listen = proxy.main;
    drop(proxy);
    until_blocking(
        "nginx's listener to close",
        || match std::net::TcpStream::connect(listen) {
            Ok(_) => Err("still accepting"),
            Err(_) => Ok(()),
        },
    );
}
