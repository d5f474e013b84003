//! The feed's tunables: where it listens (or not at all), who may
//! subscribe, and the bounds that keep a subscriber from costing the master
//! more than a few buffers.

use std::{
    fmt,
    net::{Ipv4Addr, SocketAddr, SocketAddrV4},
    str::FromStr,
    time::Duration,
};

use super::token::FeedToken;

/// Where the feed listens: an address, or nowhere (`off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedListen {
    /// No feed: bridges poll the master as before.
    Off,
    /// The feed's own TCP port, apart from the public 51963.
    At(SocketAddr),
}

impl FeedListen {
    /// The default: loopback, next to the specification's port, so bridges
    /// on the master's machine find it and nobody else can reach it.
    pub const DEFAULT: FeedListen = FeedListen::At(SocketAddr::V4(SocketAddrV4::new(
        Ipv4Addr::LOCALHOST,
        protocol::feed::DEFAULT_PORT,
    )));
}

impl FromStr for FeedListen {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("off") {
            return Ok(Self::Off);
        }
        s.parse()
            .map(Self::At)
            .map_err(|_| format!("{s:?} is neither an address (IP:PORT) nor `off`"))
    }
}

impl fmt::Display for FeedListen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Off => f.write_str("off"),
            Self::At(addr) => addr.fmt(f),
        }
    }
}

/// Tunables of the feed server.
#[derive(Debug, Clone)]
pub struct FeedConfig {
    /// The secret a subscriber must send; `None`: anyone who reaches the
    /// port may subscribe (the list is what `msQueryGameServers` answers
    /// anyway; the port is meant for loopback or a private network).
    pub token: Option<FeedToken>,
    /// Subscribers served at once; more are closed at once. A slot is
    /// taken only by a connection whose subscribe was read (and its token
    /// checked); as many connections may wait to send theirs.
    pub max_subscribers: usize,
    /// Connections one address (IPv6: one /64) may hold at once,
    /// subscribed or waiting to subscribe; more are closed at once.
    pub max_per_address: usize,
    /// A connection that has not subscribed this long after connecting is
    /// closed.
    pub first_message_timeout: Duration,
    /// A subscriber that takes longer than this to take one write (its
    /// deltas, or a snapshot) is closed; it catches up when it reconnects.
    pub write_timeout: Duration,
    /// Deltas kept for subscribers that reconnect or fall behind; older
    /// ones are answered with a snapshot.
    pub ring: usize,
}

impl FeedConfig {
    /// Default of [`FeedConfig::max_subscribers`]: bridges, not viewers.
    pub const DEFAULT_MAX_SUBSCRIBERS: usize = 64;
    /// Default of [`FeedConfig::max_per_address`]: the bridges of one
    /// machine (a deployment runs several beside the master, on loopback),
    /// with room for each to reconnect while its old connection is still
    /// being closed, and a quarter of the subscriber slots at most.
    pub const DEFAULT_MAX_PER_ADDRESS: usize = 16;
    /// Default of [`FeedConfig::ring`], as the bridge's own.
    pub const DEFAULT_RING: usize = 64;
}

impl Default for FeedConfig {
    fn default() -> Self {
        Self {
            token: None,
            max_subscribers: Self::DEFAULT_MAX_SUBSCRIBERS,
            max_per_address: Self::DEFAULT_MAX_PER_ADDRESS,
            first_message_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(10),
            ring: Self::DEFAULT_RING,
        }
    }
}

/// A [`FeedConfig`] value the feed cannot work with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedConfigError {
    #[error("{0} must be at least 1")]
    Zero(&'static str),
}

impl FeedConfig {
    /// Refuses values that would refuse every subscriber or time out at once.
    pub fn validate(&self) -> Result<(), FeedConfigError> {
        if self.max_subscribers == 0 {
            return Err(FeedConfigError::Zero(
                "the subscriber cap (--feed-max-subscribers)",
            ));
        }
        if self.max_per_address == 0 {
            return Err(FeedConfigError::Zero(
                "the per-address cap (--feed-max-per-address)",
            ));
        }
        if self.ring == 0 {
            return Err(FeedConfigError::Zero("the feed's ring of deltas"));
        }
        if self.first_message_timeout.is_zero() || self.write_timeout.is_zero() {
            return Err(FeedConfigError::Zero("the feed's timeouts"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_reads_an_address_or_off() {
        assert_eq!("off".parse(), Ok(FeedListen::Off));
        assert_eq!("OFF".parse(), Ok(FeedListen::Off));
        assert_eq!(
            "127.0.0.1:51964".parse::<FeedListen>(),
            Ok(FeedListen::DEFAULT)
        );
        assert_eq!(FeedListen::DEFAULT.to_string(), "127.0.0.1:51964");
        assert!("nowhere".parse::<FeedListen>().is_err());
        assert_eq!(FeedConfig::default().validate(), Ok(()));
        let zero = FeedConfig {
            max_subscribers: 0,
            ..FeedConfig::default()
        };
        assert!(zero
            .validate()
            .unwrap_err()
            .to_string()
            .contains("--feed-max-subscribers"));
    }
}
