//! A secret the operator gives (the feed's token, the bridge's admin
//! token): trimmed, held to a least length, read from the first line of a
//! file, compared in constant time, never shown. Written once here, in
//! the crate both servers build on, so that each token only words its own
//! errors.

use std::{
    fmt, io,
    path::{Path, PathBuf},
};

use subtle::ConstantTimeEq;

/// Shortest secret accepted: shorter ones can be guessed.
pub const MIN_TOKEN_LEN: usize = 16;

/// Why a secret was refused or could not be read, before its token words
/// it: each token maps it to its own error, so their texts stay theirs.
#[derive(Debug)]
pub enum SecretError {
    /// Shorter than [`MIN_TOKEN_LEN`] characters once trimmed (0: empty).
    Short(usize),
    /// The file named for it could not be read.
    File {
        /// The file, for the operator to check.
        path: PathBuf,
        /// Why it could not be read.
        source: io::Error,
    },
}

/// A secret as given, trimmed. `Debug` hides it, so that it is never
/// logged by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// `text` trimmed, refused when shorter than [`MIN_TOKEN_LEN`]
    /// characters (or empty), because such a secret could be guessed.
    pub fn new(text: &str) -> Result<Self, SecretError> {
        let text = text.trim();
        let len = text.chars().count();
        if len < MIN_TOKEN_LEN {
            return Err(SecretError::Short(len));
        }
        Ok(Self(text.to_owned()))
    }

    /// The secret on the first line of `path`, so that it need not be on
    /// a command line that other users can read.
    pub fn from_file(path: &Path) -> Result<Self, SecretError> {
        let text = std::fs::read_to_string(path).map_err(|source| SecretError::File {
            path: path.to_owned(),
            source,
        })?;
        Self::new(text.lines().next().unwrap_or_default())
    }

    /// Whether `candidate` is the secret, compared in constant time so
    /// that timing does not reveal a prefix.
    pub fn matches(&self, candidate: &str) -> bool {
        bool::from(self.0.as_bytes().ct_eq(candidate.as_bytes()))
    }

    /// The secret itself, for the one place that must send or print it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_held_to_its_length_and_hidden() {
        assert!(matches!(Secret::new("   "), Err(SecretError::Short(0))));
        assert!(matches!(
            Secret::new(" 0123456789abcde "),
            Err(SecretError::Short(15))
        ));
        let secret = Secret::new(" 0123456789abcdef\n").unwrap();
        assert_eq!(secret.expose(), "0123456789abcdef");
        assert!(secret.matches("0123456789abcdef"));
        assert!(!secret.matches("0123456789abcde"));
        assert!(!secret.matches(""));
        assert_eq!(format!("{secret:?}"), "Secret(..)");
    }

    #[test]
    fn read_from_the_first_line_of_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, "0123456789abcdef\nignored\n").unwrap();
        assert!(Secret::from_file(&path)
            .unwrap()
            .matches("0123456789abcdef"));
        let missing = dir.path().join("missing");
        assert!(matches!(
            Secret::from_file(&missing),
            Err(SecretError::File { path, .. }) if path == missing
        ));
    }
}
