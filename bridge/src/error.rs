//! The bridge's errors: configuration and start-up faults (ours), as
//! opposed to a browser's faults, which are answered on the wire; and why a
//! connection to the master failed, which decides what happens next.

use std::{io, path::PathBuf, time::Duration};

/// Why the bridge could not start or serve.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("cannot generate a random admin token: {0}")]
    Random(getrandom::Error),
    #[error("cannot use the data directory {path}: {source}")]
    DataDir { path: PathBuf, source: io::Error },
    #[error("the server key secret {path} is unusable: {reason}")]
    KeySecret { path: PathBuf, reason: String },
    #[error("the history database {path} is unusable: {reason}")]
    Database { path: PathBuf, reason: String },
    #[error("the webhooks cannot be loaded: {0}")]
    Webhooks(String),
    #[error("the database's key secret is another than the one this bridge keyed the list with while the database was unreachable; start the bridge again (it keeps the database's now)")]
    KeySecretChanged,
    #[error("the key secret could not be read from the database: its thread stopped")]
    KeySecretUnread,
}

/// A [`Config`](crate::Config) value the bridge cannot work with, naming the setting (the
/// command line maps the names to its flags in its messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("the {0} must be greater than zero")]
    Zero(&'static str),
    #[error("the reconnect minimum is above the reconnect maximum")]
    ReconnectRange,
    #[error("the reconnect minimum is above the feed retry maximum")]
    FeedRetryRange,
    #[error("the history interval must be a whole number of seconds, at least one")]
    HistoryInterval,
}

/// Why a connection to the master (the shared upstream's or an admin's)
/// could not be opened or ended; logged when the master goes down (never
/// shown to clients: it names the master and the OS error).
#[derive(Debug, thiserror::Error)]
pub enum MasterError {
    #[error("cannot connect to the master at {master}: {source}")]
    Connect { master: String, source: io::Error },
    #[error("cannot connect to the master at {master}: no answer within {timeout:?}")]
    ConnectTimeout { master: String, timeout: Duration },
    #[error("cannot write to the master: {0}")]
    Write(io::Error),
    #[error("no answer: the master does not read")]
    NotReading,
    #[error("no answer from the master within {0:?}")]
    NoAnswer(Duration),
    #[error("no answer: {0} queries unanswered")]
    Unanswered(usize),
    #[error("the master closed the connection")]
    Closed,
    #[error("reading from the master failed: {0}")]
    Read(io::Error),
}

/// Why the master's change feed could not be followed (then the bridge
/// polls, and tries the feed again later).
#[derive(Debug, thiserror::Error)]
pub enum FeedError {
    #[error(transparent)]
    Master(#[from] MasterError),
    #[error("the master refused the feed subscription: {0}")]
    Refused(protocol::feed::FeedRefusal),
    #[error("the master refused the feed subscription for a reason this bridge does not know")]
    RefusedOther,
    #[error("what answers at the feed's address is not a master's change feed")]
    NotAFeed,
    #[error("the feed sent a message that is not readable")]
    Unreadable,
    #[error("the feed sent a message larger than the bridge reads; skipped")]
    Discarded,
    #[error("the feed's list was not taken: {0}")]
    Follow(#[from] protocol::delta::FollowError),
    #[error("the feed's changes do not follow the bridge's list; a snapshot is needed")]
    Unfollowed(#[from] protocol::delta::Unfollowed),
}

impl FeedError {
    /// Whether the master was reached but went silent (a hung master): it
    /// is down at once, as when a query goes unanswered.
    pub fn is_silence(&self) -> bool {
        matches!(self, Self::Master(e) if e.is_silence())
    }

    /// Whether the feed sent what a feed must not (a list that breaks a
    /// rule or does not apply, an unreadable or oversized message) or
    /// changes the bridge's list cannot take: the list held is no longer
    /// the master's, and the feed is tried again only after the backoff,
    /// never at once, or a misbehaving master makes a busy loop of
    /// reconnects and snapshots.
    pub fn is_misbehaviour(&self) -> bool {
        matches!(
            self,
            Self::Follow(_)
                | Self::Unfollowed(_)
                | Self::Unreadable
                | Self::Discarded
                | Self::NotAFeed
        )
    }
}

impl MasterError {
    /// Whether the master was reached but answers nothing: such a master is
    /// down already, while a lost connection is first retried.
    pub fn is_silence(&self) -> bool {
        matches!(
            self,
            Self::NotReading | Self::NoAnswer(_) | Self::Unanswered(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_master_is_told_from_a_lost_connection() {
        let timeout = Duration::from_secs(5);
        assert!(MasterError::NoAnswer(timeout).is_silence());
        assert!(MasterError::NotReading.is_silence());
        assert!(!MasterError::Closed.is_silence());
        assert!(!MasterError::Read(io::ErrorKind::ConnectionReset.into()).is_silence());
        let refused = MasterError::Connect {
            master: "127.0.0.1:1".into(),
            source: io::ErrorKind::ConnectionRefused.into(),
        };
        assert!(!refused.is_silence());
        // The log shows these sentences.
        assert_eq!(
            MasterError::NoAnswer(timeout).to_string(),
            "no answer from the master within 5s"
        );
        assert!(refused
            .to_string()
            .starts_with("cannot connect to the master at 127.0.0.1:1: "));
    }
}
