//! The one error type of the load generator's library.

use std::time::Duration;

/// What can stop a benchmark phase.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("WebSocket: {0}")]
    WebSocket(#[from] tokio_tungstenite::tungstenite::Error),
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// nginx's set-up: openssl, the deployed config's renderer.
    #[error("{0}")]
    Support(#[from] lobby_testkit::Error),
    /// A process or peer answered something the benchmark did not expect.
    #[error("{0}")]
    Unexpected(String),
    /// A bounded wait ran out.
    #[error("timed out after {1:?}: {0}")]
    Timeout(String, Duration),
    /// A wait on a signal (`lobby_testkit::try_until`) went on past the
    /// kit's bound.
    #[error("{0}")]
    Hung(#[from] lobby_testkit::Hung),
}

/// Results of the load generator's library.
pub type Result<T> = std::result::Result<T, Error>;

/// Runs `fut`; fails with [`Error::Timeout`] naming `what` only if it
/// hangs: when it has not finished within the test kit's
/// [`lobby_testkit::HUNG`]. A slow or busy machine makes a slow run, not
/// a failed one; how long things take is what the phases measure, never
/// this bound.
pub async fn within<T>(
    what: impl Into<String>,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    within_for(lobby_testkit::HUNG, what, fut).await
}

/// [`within`] for work a full run makes longer than [`lobby_testkit::HUNG`]
/// (thousands of clients, a whole Lighthouse run): fails after `limit`,
/// never sooner than `HUNG` whatever `limit` says. Still only a guard
/// against a hung run.
pub async fn within_for<T>(
    limit: Duration,
    what: impl Into<String>,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let limit = limit.max(lobby_testkit::HUNG);
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r,
        Err(_) => Err(Error::Timeout(what.into(), limit)),
    }
}
