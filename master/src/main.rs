//! `master`: runs the lobby's master server until SIGINT or SIGTERM.

use std::net::SocketAddr;

use anyhow::Context;
use clap::Parser;
use master::{signal::shutdown_signal, Config};

/// The lobby's master server: game servers register over TCP, clients query
/// the list (see the README for the protocol).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "MASTER_LISTEN", default_value_t = Config::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Connections served at once.
    #[arg(long, env = "MASTER_MAX_CONNECTIONS", default_value_t = Config::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// Seconds a connection may be silent before TCP keepalive probes check
    /// that its peer still exists (spread by up to half again per connection,
    /// then up to 6 probes about 10 s apart).
    #[arg(
        long,
        env = "MASTER_KEEPALIVE_SECS",
        default_value_t = Config::DEFAULT_KEEPALIVE.as_secs()
    )]
    keepalive_secs: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    master::logging::init();
    let args = Args::parse();
    // Every connection is a file descriptor: use all the hard limit allows.
    if let Err(e) = rlimit::increase_nofile_limit(args.max_connections as u64 + 256) {
        tracing::warn!(error = %e, "cannot raise the open-file limit");
    }
    let listener =
        master::bind(args.listen).with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, "master listening");
    // One machine-readable line on stdout, so scripts and tests can wait for
    // readiness (and learn the port when listening on port 0).
    println!("master listening on {addr}");
    let config = Config {
        max_connections: args.max_connections,
        keepalive: std::time::Duration::from_secs(args.keepalive_secs),
        ..Config::default()
    };
    master::run(listener, config, shutdown_signal()).await;
    Ok(())
}
