//! The bridge's errors: configuration and start-up faults (ours), as
//! opposed to a browser's faults, which are answered on the wire.

use std::{io, path::PathBuf};

/// Why the bridge could not start or serve.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the admin token is empty")]
    EmptyToken,
    #[error(
        "the admin token is {0} characters long; use at least {min} (for example \
         `openssl rand -hex 16`), or set none and let the bridge generate one",
        min = crate::token::MIN_TOKEN_LEN
    )]
    ShortToken(usize),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("cannot read the admin token file {path}: {source}")]
    TokenFile { path: PathBuf, source: io::Error },
    #[error("cannot generate a random admin token: {0}")]
    Random(String),
    #[error("HTTP server failed: {0}")]
    Serve(io::Error),
}
