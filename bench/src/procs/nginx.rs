//! nginx in front of the benchmark's bridges: the test kit's launcher
//! ([`lobby_testkit::nginx::Nginx`], the deployment's own
//! `deploy/nginx/lobby.conf` rendered with the run's ports), sized for the
//! run's connections. The listener is plain HTTP (the load generator has no
//! TLS client); the end-to-end deploy test covers the TLS side.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
};

use lobby_testkit::nginx::{Main, Nginx};

use crate::error::Result;

/// Starts nginx (`found`: the kit's `nginx::find`) in `work/nginx` in
/// front of `bridges`, serving `dist`, with room for `connections` client
/// connections; ready when it accepts TCP. Stopped (with its workers) when
/// dropped.
pub async fn start(
    found: &(PathBuf, PathBuf),
    work: &Path,
    dist: &Path,
    bridges: [SocketAddr; 2],
    connections: usize,
) -> Result<Nginx> {
    // Each proxied WebSocket holds two descriptors in nginx.
    let worker_connections = connections * 2 + 256;
    let main = Main {
        workers: "auto",
        nofile: Some(worker_connections + 64),
        error_level: "warn",
        worker_connections,
        access_log: false,
    };
    let (found, dir, dist) = (found.clone(), work.join("nginx"), dist.to_path_buf());
    // The kit's start waits for nginx by polling, off the runtime.
    let start = move || Nginx::start(&found, &dir, false, bridges, &dist, &main);
    Ok(lobby_testkit::launch::blocking("nginx", start).await?)
}
