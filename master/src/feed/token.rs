//! The feed's shared secret: read from a file on both sides (master and
//! bridge), compared in constant time, never logged.

use std::{fmt, io, path::Path, path::PathBuf};

use crate::secret::{Secret, SecretError};

pub use crate::secret::MIN_TOKEN_LEN;

/// What a subscriber must send before the master serves it the feed.
/// `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct FeedToken(Secret);

/// Why a feed token was refused.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "the feed token is {0} characters long; use at least {MIN_TOKEN_LEN} \
         (for example `openssl rand -hex 16`)"
    )]
    Short(usize),
    #[error("cannot read the feed token file {path}: {source}")]
    File { path: PathBuf, source: io::Error },
}

impl From<SecretError> for TokenError {
    fn from(refused: SecretError) -> Self {
        match refused {
            SecretError::Short(len) => Self::Short(len),
            SecretError::File { path, source } => Self::File { path, source },
        }
    }
}

impl FeedToken {
    /// A token given by the operator, trimmed; shorter than
    /// [`MIN_TOKEN_LEN`] characters (or empty) is refused.
    pub fn new(token: &str) -> Result<Self, TokenError> {
        Ok(Self(Secret::new(token)?))
    }

    /// Reads the token from the first line of `path`.
    pub fn from_file(path: &Path) -> Result<Self, TokenError> {
        Ok(Self(Secret::from_file(path)?))
    }

    /// Constant-time comparison, so timing does not reveal a prefix.
    pub fn matches(&self, candidate: &str) -> bool {
        self.0.matches(candidate)
    }

    /// The token itself, for the subscriber to send.
    pub fn expose(&self) -> &str {
        self.0.expose()
    }
}

impl fmt::Debug for FeedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FeedToken(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_tokens_are_refused_and_debug_hides_it() {
        assert!(matches!(
            FeedToken::new(" short "),
            Err(TokenError::Short(5))
        ));
        let token = FeedToken::new("0123456789abcdef\n").unwrap();
        assert!(token.matches("0123456789abcdef"));
        assert!(!token.matches("0123456789abcdeF"));
        assert!(!token.matches(""));
        assert_eq!(format!("{token:?}"), "FeedToken(..)");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "0123456789abcdef\nignored\n").unwrap();
        assert!(FeedToken::from_file(&path)
            .unwrap()
            .matches("0123456789abcdef"));
        assert!(FeedToken::from_file(&dir.path().join("missing")).is_err());
    }
}
