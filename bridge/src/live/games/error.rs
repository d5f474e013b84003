//! Why a source or a server could not be read, as types: the text viewers
//! get is rendered from them, with the address for admins (and everyone
//! when addresses are shown) and without it under `--hide-addresses`.

use gamequery::QueryError;

/// Why a configured source (an A2S server's name, a GameAgent master) gave
/// no list.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The configured `host:port` did not resolve.
    #[error("cannot resolve {label}: {source}")]
    Resolve {
        label: String,
        #[source]
        source: std::io::Error,
    },
    /// It resolved to nothing.
    #[error("{label} has no address")]
    NoAddress { label: String },
    /// The master's list query failed.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// The round's deadline passed first.
    #[error("no answer in time")]
    Deadline,
}

impl SourceError {
    /// The text a client sees: `with_address` false leaves out every name,
    /// address and port.
    pub fn text(&self, with_address: bool) -> String {
        if with_address {
            return self.to_string();
        }
        match self {
            Self::Resolve { source, .. } => {
                format!("cannot resolve the name: {}", source.kind())
            }
            Self::NoAddress { .. } => "the name has no address".to_owned(),
            Self::Query(e) => e.without_address(),
            Self::Deadline => self.to_string(),
        }
    }
}

/// Why a server is offline.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Query(#[from] QueryError),
    /// The round's deadline passed before it answered.
    #[error("no answer in time")]
    Deadline,
}

impl ServerError {
    /// The text a client sees: `with_address` false leaves out the address.
    pub fn text(&self, with_address: bool) -> String {
        match self {
            Self::Query(e) if !with_address => e.without_address(),
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{
        io,
        net::{Ipv4Addr, SocketAddr},
    };

    use gamequery::DecodeError;

    use super::*;

    /// Every error that names a place renders without it.
    #[test]
    fn no_address_without_address() {
        let addr = SocketAddr::from((Ipv4Addr::new(203, 0, 113, 77), 27015));
        let queries = || {
            vec![
                QueryError::Timeout { addr, attempts: 3 },
                QueryError::ChallengeLoop(addr),
                QueryError::Io {
                    addr,
                    source: io::Error::new(io::ErrorKind::ConnectionRefused, format!("{addr}")),
                },
                QueryError::Decode {
                    addr,
                    source: DecodeError::InvalidField {
                        field: "status marker",
                        value: addr.to_string(),
                    },
                },
            ]
        };
        let label = "game.example.org:27015";
        let mut sources: Vec<SourceError> = queries().into_iter().map(Into::into).collect();
        sources.push(SourceError::Resolve {
            label: label.into(),
            source: io::Error::other(label.to_owned()),
        });
        sources.push(SourceError::NoAddress {
            label: label.into(),
        });
        sources.push(SourceError::Deadline);
        let mut servers: Vec<ServerError> = queries().into_iter().map(Into::into).collect();
        servers.push(ServerError::Deadline);
        let texts = sources
            .iter()
            .map(|e| (e.text(false), e.text(true)))
            .chain(servers.iter().map(|e| (e.text(false), e.text(true))));
        for (hidden, shown) in texts {
            for secret in ["203.0.113.77", "27015", "game.example.org"] {
                assert!(!hidden.contains(secret), "{hidden:?} names {secret}");
            }
            assert!(!hidden.is_empty());
            if hidden != "no answer in time" {
                assert!(
                    shown.contains("203.0.113.77") || shown.contains("game.example.org"),
                    "{shown:?}"
                );
            }
        }
    }
}
