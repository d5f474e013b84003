//! Which addresses a webhook or a push endpoint may reach
//! (`docs/protocol.md` §2.4): nobody may use the lobby to reach its own
//! networks. A URL's host that is, or resolves to, an address that is not
//! globally reachable by IANA's special-purpose registries
//! (`protocol::address::is_global`, the games' rule too), or whose port
//! is 0, is refused unless the
//! [`Reach`] allows it: `--webhook-allow-private` any address,
//! `--push-allow-insecure` loopback ones (tests).
//!
//! The check happens where the connection is made: [`CheckedResolver`] is
//! the HTTP client's only resolver, so a host name is resolved once per
//! connection and the client connects to exactly the addresses that were
//! checked (a second answer from DNS, "rebinding", never reaches a socket).
//! An IP literal is not resolved at all; [`literal_allowed`] checks it
//! before each attempt.

use std::{
    net::{IpAddr, SocketAddr},
    time::Duration,
};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Addresses of one host name kept at most.
const MAX_ADDRS: usize = 16;
/// How long resolving a host may take when a webhook is created.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// A host refused because of where it points; the client's error chain
/// carries it, so a refused delivery is not retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the host is, or resolves to, an address that is not public")]
pub struct Refused;

/// Which addresses a client may reach besides public ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Public addresses only (the default of both).
    Public,
    /// Public and loopback ones (`--push-allow-insecure`, tests).
    AlsoLoopback,
    /// Any address (`--webhook-allow-private`).
    Any,
}

impl Reach {
    /// The webhooks' reach: [`Reach::Any`] with `--webhook-allow-private`.
    pub fn webhooks(allow_private: bool) -> Self {
        if allow_private {
            Reach::Any
        } else {
            Reach::Public
        }
    }
}

/// Whether an address may be reached: `protocol::address`'s rule.
pub fn allowed(ip: IpAddr, reach: Reach) -> bool {
    match reach {
        Reach::Any => true,
        Reach::AlsoLoopback if protocol::address::is_loopback(ip) => true,
        _ => protocol::address::is_global(ip),
    }
}

/// Whether the URL's host, if an IP literal, may be reached (a host name
/// is checked by [`CheckedResolver`] when the connection is made).
pub fn literal_allowed(url: &Url, reach: Reach) -> bool {
    if url.port() == Some(0) {
        return false;
    }
    match url.host() {
        Some(Host::Ipv4(ip)) => allowed(IpAddr::V4(ip), reach),
        Some(Host::Ipv6(ip)) => allowed(IpAddr::V6(ip), reach),
        Some(Host::Domain(_)) => true,
        None => false,
    }
}

/// Resolves `host` and checks every address: all must be allowed (one
/// private address among public ones is refused too).
async fn resolve_checked(host: &str, reach: Reach) -> Result<Vec<SocketAddr>, ResolveError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|_| ResolveError::NotFound)?
        .take(MAX_ADDRS)
        .collect();
    if addrs.is_empty() {
        return Err(ResolveError::NotFound);
    }
    if addrs.iter().any(|a| !allowed(a.ip(), reach)) {
        return Err(ResolveError::Refused);
    }
    Ok(addrs)
}

/// Why a host cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("the host does not resolve")]
    NotFound,
    #[error("the host is, or resolves to, an address that is not public")]
    Refused,
}

/// Checks a new webhook's URL: its host is an allowed literal, or resolves
/// (within [`RESOLVE_TIMEOUT`]) to allowed addresses only.
pub async fn check_url(url: &Url, reach: Reach) -> Result<(), ResolveError> {
    if url.port() == Some(0) {
        return Err(ResolveError::Refused);
    }
    match url.host() {
        Some(Host::Domain(name)) => {
            match tokio::time::timeout(RESOLVE_TIMEOUT, resolve_checked(name, reach)).await {
                Ok(result) => result.map(drop),
                Err(_) => Err(ResolveError::NotFound),
            }
        }
        Some(_) if literal_allowed(url, reach) => Ok(()),
        _ => Err(ResolveError::Refused),
    }
}

/// The delivery client's resolver: the system's, with every answer checked.
#[derive(Debug, Clone, Copy)]
pub struct CheckedResolver {
    pub reach: Reach,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let reach = self.reach;
        Box::pin(async move {
            match resolve_checked(name.as_str(), reach).await {
                Ok(addrs) => Ok(Box::new(addrs.into_iter()) as Addrs),
                Err(ResolveError::Refused) => Err(Box::new(Refused) as _),
                Err(e) => Err(Box::new(e) as _),
            }
        })
    }
}

/// Whether `error` (from the client) comes from a refused address.
pub fn is_refused(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.downcast_ref::<Refused>().is_some() {
            return true;
        }
        cause = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[tokio::test]
    async fn non_public_hosts_are_refused_unless_allowed() {
        for u in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://localhost:9/",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://100.64.0.1/",
            "http://224.0.0.1/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[::]/",
            "http://[fe80::1]/",
            "http://[fd00::1]/",
            "http://[ff02::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:a9fe:a9fe]/",
            // What IANA's registries say is not globally reachable, which
            // a list of ranges had missed: local-use NAT64, Teredo, SIIT,
            // IPv4-mapped public, discard-only, 6to4.
            "http://[64:ff9b:1::808:808]/",
            "http://[2001::1]/",
            "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
            "http://[::ffff:0:808:808]/",
            "http://[::ffff:8.8.8.8]/",
            "http://[100::1]/",
            "http://[2002:808:808::1]/",
            // Port 0 is no port.
            "http://8.8.8.8:0/",
            "http://[2a00:1450::1]:0/",
        ] {
            assert_eq!(
                check_url(&url(u), Reach::Public).await,
                Err(ResolveError::Refused),
                "{u}"
            );
        }
        assert_eq!(
            check_url(&url("http://127.0.0.1/"), Reach::Any).await,
            Ok(())
        );
        assert_eq!(
            check_url(&url("http://127.0.0.1:0/"), Reach::Any).await,
            Err(ResolveError::Refused)
        );
        assert!(!literal_allowed(&url("http://127.0.0.1:0/"), Reach::Any));
        assert_eq!(
            check_url(&url("http://localhost/"), Reach::Any).await,
            Ok(())
        );
        assert_eq!(
            check_url(&url("http://203.0.114.1/"), Reach::Public).await,
            Ok(())
        );
        assert!(literal_allowed(
            &url("https://[2a00:1450::1]/"),
            Reach::Public
        ));
        assert!(!literal_allowed(
            &url("https://[::ffff:10.0.0.1]/"),
            Reach::Public
        ));
    }

    #[tokio::test]
    async fn loopback_only_adds_loopback() {
        for u in [
            "http://127.0.0.1/",
            "http://127.0.0.2:9/",
            "http://[::1]/",
            "http://localhost/",
        ] {
            assert_eq!(check_url(&url(u), Reach::AlsoLoopback).await, Ok(()), "{u}");
        }
        for u in [
            "http://10.1.2.3/",
            "http://192.168.1.1/",
            "http://169.254.169.254/",
            "http://[fd00::1]/",
            "http://0.0.0.0/",
        ] {
            assert_eq!(
                check_url(&url(u), Reach::AlsoLoopback).await,
                Err(ResolveError::Refused),
                "{u}"
            );
        }
    }

    #[tokio::test]
    async fn the_resolver_refuses_at_connection_time() {
        let strict = CheckedResolver {
            reach: Reach::Public,
        };
        let err = match strict.resolve("localhost".parse().unwrap()).await {
            Ok(_) => panic!("localhost resolved for a webhook"),
            Err(e) => e,
        };
        assert!(is_refused(err.as_ref()));
        let lax = CheckedResolver { reach: Reach::Any };
        let addrs: Vec<_> = match lax.resolve("localhost".parse().unwrap()).await {
            Ok(a) => a.collect(),
            Err(e) => panic!("{e}"),
        };
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }
}
