//! `bridge`: serves the front end and relays browsers to the master, which
//! it runs in-process unless `--master` names one; until SIGINT or SIGTERM.

/// jemalloc, not the system's allocator: the bridge takes and drops whole
/// lists (megabytes of entries) on many threads, and glibc's malloc keeps
/// what a thread freed in that thread's arena. In the hostile-feed drill
/// (`bridge/tests/integration/hostile_feed.rs`, a list just within the 16
/// MiB bound taken, served and dropped) a debug build peaked at 202–215 MB
/// with glibc, 161–176 MB with glibc capped at two arenas (which needs
/// `unsafe` or the environment), 194–197 MB with mimalloc and 156–158 MB
/// with jemalloc, measured one after the other on a loaded 2-core machine.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod args;
mod signin;
mod values;

use std::{io::Write, time::Duration};

use anyhow::Context;
use bridge::{AdminToken, Bridge, Config};
use clap::Parser;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::args::Args;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    master::logging::init();
    let mut args = Args::parse();
    if let Some(args::Command::CopyHistory {
        data_dir,
        database_url,
        database_url_file,
    }) = args.command
    {
        let dir = data_dir.unwrap_or_else(args::default_data_dir);
        let database_url = args::database_url(database_url, database_url_file)?
            .context("copy-history needs --database-url or --database-url-file")?;
        // The database client blocks: off the runtime's threads.
        let copied = tokio::task::spawn_blocking(move || {
            bridge::db::history::copy_into(&dir, &database_url).map(|c| (c, database_url))
        })
        .await??;
        let (tables, url) = copied;
        for (table, rows) in &tables {
            tracing::info!(table, rows, "copied");
        }
        tracing::info!(database = %url, "the embedded history and its key secret are in the database; start the bridges with --database-url");
        return Ok(());
    }
    args.database_url = args::database_url(args.database_url, args.database_url_file.take())?;
    // Every connection is a file descriptor: use all the hard limit allows.
    let open_files = master::fdlimit::raise_to_hard_limit();

    let (token, generated) = if let Some(path) = &args.admin_token_file {
        (
            AdminToken::from_file(path)
                .with_context(|| format!("the token in {} is refused", path.display()))?,
            false,
        )
    } else if let Ok(token) = std::env::var("BRIDGE_ADMIN_TOKEN") {
        (
            AdminToken::new(&token).context("BRIDGE_ADMIN_TOKEN is refused")?,
            false,
        )
    } else {
        (AdminToken::generate()?, true)
    };

    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let shutdown = CancellationToken::new();

    let (master_addr, embedded) = match &args.master {
        Some(master) => {
            tracing::info!(%master, "relaying to an existing master");
            (master.clone(), None)
        }
        None => {
            let master_listener =
                TcpListener::bind(args.embedded_master)
                    .await
                    .with_context(|| {
                        format!(
                            "cannot start the embedded master on {0}; is a master already \
                         running there? Use it with `--master {0}`, or pick another \
                         address with `--embedded-master`",
                            args.embedded_master
                        )
                    })?;
            let master_addr = master_listener.local_addr()?;
            tracing::info!(addr = %master_addr, "starting the embedded master");
            // The bridge's own connections (its poller, one per admin) come
            // from the address it dials: exempt from the per-address cap.
            let options = args.embedded_master();
            let master_config = options.master_config(master_addr);
            master_config
                .validate()
                .context("invalid embedded master configuration")?;
            let master = master::Master::new(master_config);
            if let Some(path) = &options.ban_file {
                let bans = master::BanList::load_logged(path)?;
                tracing::info!(file = %path.display(), entries = bans.len(), "ban list loaded");
                master.set_bans(bans);
                #[cfg(unix)]
                master::signal::reload_bans_on_hangup(master.clone(), path.clone())
                    .context("cannot listen for SIGHUP")?;
            }
            let registry = master.registry();
            let stop = shutdown.clone();
            let task = tokio::spawn(async move {
                // Validated above: it only returns once the bridge stops.
                let _ = master.run(master_listener, stop.cancelled_owned()).await;
            });
            (master_addr.to_string(), Some((task, registry)))
        }
    };

    let master_feed_token = match &args.master_feed_token_file {
        Some(path) => Some(
            master::feed::FeedToken::from_file(path)
                .with_context(|| format!("the feed token in {} is refused", path.display()))?,
        ),
        None => None,
    };
    let config = args.config(
        Config {
            master_feed_token,
            ..Config::new(master_addr.clone(), token.clone())
        },
        open_files,
    );
    if let Some(feed) = &config.master_feed {
        tracing::info!(%feed, "following the master's change feed (polling while it cannot)");
    }
    config.validate()?;
    // With the master in this process, its changes are pushed as they
    // happen; a remote master is polled.
    // An unusable data directory stops the bridge before it says it listens.
    let (bridge, embedded) = match embedded {
        Some((task, registry)) => (Bridge::embedding(config, registry), Some(task)),
        None => (Bridge::new(config), None),
    };
    let bridge = match bridge {
        Ok(bridge) => bridge,
        Err(e) => {
            shutdown.cancel();
            return Err(e.into());
        }
    };

    tracing::info!(%addr, master = %master_addr, "bridge listening");
    // The readiness line on stdout: scripts and tests wait for it.
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "bridge listening on http://{addr} master {master_addr}"
    )?;
    stdout.flush()?;
    drop(stdout);
    // A generated token is shown to the operator, never written to the log.
    let shown = if generated {
        let link = format!("http://{addr}/admin#token={}", token.expose());
        Some(signin::show(&link)?)
    } else {
        None
    };

    let stop = shutdown.clone();
    tokio::spawn(async move {
        master::signal::shutdown_signal().await;
        stop.cancel();
    });
    let result = bridge
        .run(listener, shutdown.clone().cancelled_owned())
        .await;
    shutdown.cancel();
    if let Some(task) = embedded {
        let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
    }
    if let Some(shown) = shown {
        shown.forget();
    }
    result?;
    Ok(())
}
