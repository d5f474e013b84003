//! What the load generator (`bench`) and the tests both need to run the
//! deployment's own parts: nginx in front of two bridges ([`nginx`]) and a
//! scratch PostgreSQL cluster ([`postgres`]). One copy, so an edit of
//! `deploy/nginx/lobby.conf` is followed in one place for both.

pub mod nginx;
pub mod postgres;

/// Why a support function failed: a file it could not write, or in words
/// (what to install, what in the deployed file no longer matches).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Unexpected(String),
}

/// Results of the support functions.
pub type Result<T> = std::result::Result<T, Error>;
