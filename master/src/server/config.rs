//! The master's tunables: defaults the binary's flags read, the embedded
//! variant the bridge uses, and the check that refuses unusable values.
//! The change feed's (`--feed-listen`, `--feed-token-file`,
//! `--feed-max-subscribers`) are in [`crate::feed::FeedConfig`].

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4},
    time::Duration,
};

use ipnet::IpNet;

/// Tunables of a master; the defaults are what the binary uses.
#[derive(Debug, Clone)]
pub struct Config {
    /// Connections served at once, exempt ones included; a connection
    /// beyond it is closed at once.
    pub max_connections: usize,
    /// Connections served at once from one address (IPv6: one /64), so one
    /// host cannot take every slot; a connection beyond it is closed at once.
    pub max_per_address: usize,
    /// Networks the per-address cap and the message rate limit do not apply
    /// to: hosting providers with many servers behind one address, or an
    /// embedding bridge's own loopback connections.
    pub exempt: Vec<IpNet>,
    /// Replies queued for one connection before it counts as not reading and
    /// is closed. Replies share the cached list, so a full queue costs little.
    pub outbound_queue: usize,
    /// Idle time before TCP keepalive probes start, so vanished peers' servers
    /// are removed even if they never send a FIN.
    pub keepalive: Duration,
    /// How long shutdown waits for connections to finish.
    pub shutdown_grace: Duration,
    /// A connection that has sent no valid message this long after it was
    /// accepted is closed, so silent connections cannot hold slots.
    pub first_message_timeout: Duration,
    /// Messages a connection may send per second on average.
    pub message_rate: u32,
    /// Messages a connection may send at once before the rate applies.
    pub message_burst: u32,
    /// Messages over the rate (discarded) after which the connection is
    /// closed, counted until the peer is quiet long enough to fill its burst.
    pub flood_close_after: u32,
    /// Discard registrations whose `serverAddress` is not the IP address
    /// the connection comes from (hostnames included).
    pub require_peer_address: bool,
}

impl Config {
    /// Where the binary listens unless told: the specification's port, on
    /// loopback (the bridge's embedded master uses it too).
    pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::V4(SocketAddrV4::new(
        Ipv4Addr::LOCALHOST,
        protocol::MASTER_PORT,
    ));
    /// Default of [`Config::max_connections`].
    pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
    /// Default of [`Config::keepalive`].
    pub const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(30);
    /// Default of [`Config::max_per_address`], in the spirit of dpmaster's 32.
    pub const DEFAULT_MAX_PER_ADDRESS: usize = 32;
    /// Default of [`Config::first_message_timeout`].
    pub const DEFAULT_FIRST_MESSAGE_TIMEOUT: Duration = Duration::from_secs(10);
    /// [`Config::DEFAULT_FIRST_MESSAGE_TIMEOUT`] as the binary's flag writes it.
    pub const DEFAULT_FIRST_MESSAGE_TIMEOUT_TEXT: &'static str = "10s";
    /// Default of [`Config::message_rate`].
    pub const DEFAULT_MESSAGE_RATE: u32 = 20;
    /// Default of [`Config::message_burst`].
    pub const DEFAULT_MESSAGE_BURST: u32 = 60;
    /// Default of [`Config::flood_close_after`].
    pub const DEFAULT_FLOOD_CLOSE_AFTER: u32 = 200;
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            max_per_address: Self::DEFAULT_MAX_PER_ADDRESS,
            exempt: Vec::new(),
            outbound_queue: 16,
            keepalive: Self::DEFAULT_KEEPALIVE,
            shutdown_grace: Duration::from_secs(3),
            first_message_timeout: Self::DEFAULT_FIRST_MESSAGE_TIMEOUT,
            message_rate: Self::DEFAULT_MESSAGE_RATE,
            message_burst: Self::DEFAULT_MESSAGE_BURST,
            flood_close_after: Self::DEFAULT_FLOOD_CLOSE_AFTER,
            require_peer_address: false,
        }
    }
}

/// A [`Config`] value the master cannot work with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    #[error("{0} must not be zero")]
    ZeroDuration(&'static str),
}

impl Config {
    /// The defaults for a master embedded in a program (the bridge) that
    /// connects to it at `listen`: the address those connections come from
    /// is exempt, since the program holds one connection per admin and
    /// limits its own clients. Game servers on that address are exempt too.
    pub fn embedded(listen: SocketAddr) -> Self {
        let own = match listen.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip.to_canonical(),
        };
        Self {
            exempt: vec![IpNet::from(own)],
            ..Self::default()
        }
    }

    /// Checks the values a program took from its user; [`Master::run`]
    /// refuses to start with a configuration that fails this.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let counts = [
            (
                self.max_connections,
                "the connection cap (--max-connections)",
            ),
            (
                self.max_per_address,
                "the per-address cap (--max-per-address)",
            ),
            (self.outbound_queue, "the reply queue"),
            (
                self.message_rate as usize,
                "the message rate (--message-rate)",
            ),
            (
                self.message_burst as usize,
                "the message burst (--message-burst)",
            ),
            (
                self.flood_close_after as usize,
                "the flood limit (--flood-close-after)",
            ),
        ];
        if let Some((_, what)) = counts.iter().find(|(n, _)| *n == 0) {
            return Err(ConfigError::Zero(what));
        }
        let durations = [
            (self.keepalive, "the keepalive time (--keepalive-secs)"),
            (
                self.first_message_timeout,
                "the first-message timeout (--first-message-timeout)",
            ),
        ];
        if let Some((_, what)) = durations.iter().find(|(d, _)| d.is_zero()) {
            return Err(ConfigError::ZeroDuration(what));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embedded_master_exempts_the_address_its_host_dials_from() {
        let exempt = |listen: &str| Config::embedded(listen.parse().unwrap()).exempt;
        assert_eq!(exempt("127.0.0.1:51963"), ["127.0.0.1/32".parse().unwrap()]);
        assert_eq!(exempt("0.0.0.0:51963"), ["127.0.0.1/32".parse().unwrap()]);
        assert_eq!(exempt("[::]:51963"), ["::1/128".parse().unwrap()]);
        assert_eq!(exempt("192.0.2.1:51963"), ["192.0.2.1/32".parse().unwrap()]);
    }

    #[test]
    fn zero_values_are_refused_with_their_flag() {
        assert_eq!(Config::default().validate(), Ok(()));
        let err = Config {
            max_per_address: 0,
            ..Config::default()
        }
        .validate()
        .unwrap_err();
        assert!(err.to_string().contains("--max-per-address"), "{err}");
        let err = Config {
            first_message_timeout: Duration::ZERO,
            ..Config::default()
        }
        .validate()
        .unwrap_err();
        assert!(err.to_string().contains("--first-message-timeout"), "{err}");
        assert!(Config {
            outbound_queue: 0,
            ..Config::default()
        }
        .validate()
        .is_err());
    }
}
