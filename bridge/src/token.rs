//! The admin token: loaded or generated, compared in constant time, never logged.

use std::{fmt, io, path::Path, path::PathBuf};

use master::secret::{Secret, SecretError};

pub use master::secret::MIN_TOKEN_LEN;

/// Why an admin token was refused or could not be had: its own type, so
/// that the token needs nothing of the bridge's other errors.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("the admin token is empty")]
    Empty,
    #[error(
        "the admin token is {0} characters long; use at least {MIN_TOKEN_LEN} (for example \
         `openssl rand -hex 16`), or set none and let the bridge generate one"
    )]
    Short(usize),
    #[error("cannot read the admin token file {path}: {source}")]
    File { path: PathBuf, source: io::Error },
    #[error("cannot generate a random admin token: {0}")]
    Random(getrandom::Error),
}

impl From<SecretError> for TokenError {
    fn from(refused: SecretError) -> Self {
        match refused {
            SecretError::Short(0) => Self::Empty,
            SecretError::Short(len) => Self::Short(len),
            SecretError::File { path, source } => Self::File { path, source },
        }
    }
}

/// The secret that makes a connection an admin. `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct AdminToken(Secret);

impl AdminToken {
    /// A token given by the operator; empty (or whitespace) is refused so
    /// that an empty `bridgeAuth` can never match, and one shorter than
    /// [`MIN_TOKEN_LEN`] characters because it could be guessed.
    pub fn new(token: &str) -> Result<Self, TokenError> {
        Ok(Self(Secret::new(token)?))
    }

    /// Reads the token from the first line of `path`.
    pub fn from_file(path: &Path) -> Result<Self, TokenError> {
        Ok(Self(Secret::from_file(path)?))
    }

    /// A random 128-bit token in hex, for a bridge started without one.
    pub fn generate() -> Result<Self, TokenError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(TokenError::Random)?;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Self::new(&hex)
    }

    /// Constant-time comparison, so timing does not reveal a prefix.
    pub fn matches(&self, candidate: &str) -> bool {
        self.0.matches(candidate)
    }

    /// The token itself, for printing it once at start.
    pub fn expose(&self) -> &str {
        self.0.expose()
    }
}

impl fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AdminToken(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_hex_and_differ() {
        let a = AdminToken::generate().unwrap();
        let b = AdminToken::generate().unwrap();
        assert_eq!(a.expose().len(), 32);
        assert!(a.expose().chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn matching() {
        let t = AdminToken::new(" secret-0123456789\n").unwrap();
        assert!(t.matches("secret-0123456789"));
        assert!(!t.matches("secret-012345678"));
        assert!(!t.matches(""));
        assert!(AdminToken::new("  ").is_err());
        assert_eq!(format!("{t:?}"), "AdminToken(..)");
    }

    #[test]
    fn short_tokens_are_refused() {
        assert!(matches!(
            AdminToken::new("0123456789abcde"),
            Err(TokenError::Short(15))
        ));
        assert!(AdminToken::new("0123456789abcdef").is_ok());
        let err = AdminToken::new("x").unwrap_err().to_string();
        assert!(err.contains("at least 16"), "{err}");
    }
}
