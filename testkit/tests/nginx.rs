//! The deployment's own `deploy/nginx/lobby.conf` renders with a run's
//! values, and the `nginx.conf` around it keeps everything in the run's
//! folder.

use std::{net::SocketAddr, path::Path};

use lobby_testkit::nginx::{Main, Site, CONFIG};

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
