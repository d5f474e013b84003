//! Process signals that end a server gracefully, and SIGHUP, which reloads
//! the ban file; shared by the master's and the bridge's binaries.

use std::path::PathBuf;

use crate::{BanList, Master};

/// Resolves on the first SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("SIGINT received, shutting down"),
        () = term => tracing::info!("SIGTERM received, shutting down"),
    }
}

/// Reloads `master`'s ban list from `path` on every SIGHUP, for as long as
/// the process runs: connections the new list bans are closed; a file that
/// cannot be read leaves the previous list in place (logged). Call it
/// inside a Tokio runtime; fails only if the signal cannot be watched.
#[cfg(unix)]
pub fn reload_bans_on_hangup(master: Master, path: PathBuf) -> std::io::Result<()> {
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    tokio::spawn(async move {
        while hangup.recv().await.is_some() {
            match BanList::load_logged(&path) {
                Ok(bans) => {
                    let entries = bans.len();
                    let closed = master.set_bans(bans);
                    tracing::info!(file = %path.display(), entries, closed, "ban list reloaded");
                }
                Err(e) => {
                    tracing::error!(error = %e, reason = %e.source, "ban list not reloaded; the previous one stays");
                }
            }
        }
    });
    Ok(())
}
