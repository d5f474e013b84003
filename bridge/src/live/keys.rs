//! Server keys (`docs/protocol.md` §2.2): each listed server's name in
//! history, pages and badges, computed from its address and port with
//! HMAC-SHA256 under a secret kept in the data directory (file
//! [`SECRET_FILE`]), truncated to 64 bits. Keyed rather than a plain hash,
//! so that with `--hide-addresses` nobody can find an address by hashing
//! candidates; bridges given the same secret file give the same keys.
//!
//! A key names a server whose address its registrant controls. A
//! registration that claims an address other than its connection's own
//! (the master says so with [`ServerEntry::registrant`], that connection's
//! network) is keyed by that network too: a stranger who registers a
//! guessed address gets a key that is not the real server's (so the key
//! tells nothing about whether the guess was right), and a twin registered
//! under a server's address and port does not share its key, its page,
//! badge or history. Twins registered from one host still share a key.
//! Where the registrant is unknown (a master's plain reply, which the
//! poll path reads) the entry is keyed as a server registering its own
//! address: see SECURITY.md, "Server keys, history and badges".
//!
//! An entry without an address or port (another master may hide them) is
//! keyed by its name instead, in a separate domain so that no name can
//! collide with an address by construction.

use std::{
    fs,
    io::{self, Write},
    net::IpAddr,
    path::{Path, PathBuf},
};

use hmac::{Hmac, Mac};
use master::limits::address_key;
use protocol::{ServerEntry, ServerKey};
use sha2::Sha256;

use crate::error::Error;

/// The secret's file in the data directory: 64 hex digits (32 bytes).
pub const SECRET_FILE: &str = "key-secret";

/// Computes servers' keys under one secret.
#[derive(Clone)]
pub struct Keys {
    mac: Hmac<Sha256>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.write_str("Keys(..)")
    }
}

impl Keys {
    /// Keys under `secret` (any length; the file holds 32 bytes).
    pub fn from_secret(secret: &[u8]) -> Self {
        // HMAC takes keys of any length: this cannot fail.
        let mac = match Hmac::<Sha256>::new_from_slice(secret) {
            Ok(mac) => mac,
            Err(_) => unreachable!("HMAC accepts keys of any length"),
        };
        Self { mac }
    }

    /// Keys under a random secret that lives as long as the process: for
    /// a bridge without a data directory (tests), whose keys change with
    /// each start.
    pub fn ephemeral() -> Result<Self, Error> {
        Ok(Self::from_secret(&random_secret()?))
    }

    /// Keys under the secret in `dir`'s [`SECRET_FILE`], which is created
    /// (mode 0600, random) when missing. A file that is not 64 hex digits
    /// is an error: a silently new secret would change every key.
    pub fn open(dir: &Path) -> Result<Self, Error> {
        Ok(Self::from_secret(&secret_in(dir)?))
    }

    /// The key of `entry`: by address and port, or by name when the
    /// entry lacks either; and by its registrant's network when it was
    /// registered by a host other than the one it names (see the module).
    pub fn key(&self, entry: &ServerEntry) -> ServerKey {
        let mut mac = self.mac.clone();
        // A claim's own domain, before the rest: an entry of the server's
        // own starts with "address" or "name", and the network's text
        // holds no NUL, so no input of one kind is one of the other.
        if let Some(registrant) = entry.registrant {
            mac.update(b"registrant\0");
            mac.update(address_key(registrant).to_string().as_bytes());
            mac.update(b"\0");
        }
        match (&entry.address, entry.port) {
            (Some(address), Some(port)) => {
                mac.update(b"address\0");
                mac.update(normalize(address).as_bytes());
                mac.update(b"\0");
                mac.update(&port.to_be_bytes());
            }
            _ => {
                mac.update(b"name\0");
                mac.update(entry.name.as_bytes());
            }
        }
        let digest = mac.finalize().into_bytes();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        ServerKey(u64::from_be_bytes(first))
    }
}

/// The secret in `dir`'s [`SECRET_FILE`], created (mode 0600, random) when
/// missing; a file that is not 64 hex digits is an error. With a shared
/// database the file is the bridge's copy of the database's secret (see
/// [`keep_secret`]).
pub fn secret_in(dir: &Path) -> Result<[u8; 32], Error> {
    let path = dir.join(SECRET_FILE);
    let secret_error = |reason: String| Error::KeySecret {
        path: path.clone(),
        reason,
    };
    match fs::read_to_string(&path) {
        Ok(text) => {
            let secret = parse_hex(text.trim())
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| {
                    secret_error("not 64 hex digits (32 bytes); restore it or remove it".into())
                })?;
            Ok(secret)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let secret = random_secret()?;
            match write_secret(dir, &path, &secret) {
                Ok(()) => {
                    tracing::info!(file = %path.display(), "created a new server key secret");
                    Ok(secret)
                }
                // Another bridge on the same directory was first: its.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => secret_in(dir),
                Err(e) => Err(secret_error(e.to_string())),
            }
        }
        Err(e) => Err(secret_error(e.to_string())),
    }
}

/// Makes `dir`'s [`SECRET_FILE`] hold `secret` (the database's), so that a
/// bridge started while its database is unreachable keys servers as the
/// others do.
pub fn keep_secret(dir: &Path, secret: &[u8; 32]) -> Result<(), Error> {
    if secret_in(dir).ok().as_ref() == Some(secret) {
        return Ok(());
    }
    let path = dir.join(SECRET_FILE);
    let _ = fs::remove_file(&path);
    write_secret(dir, &path, secret).map_err(|e| Error::KeySecret {
        path: path.clone(),
        reason: e.to_string(),
    })
}

/// Who added `entry` to the list, as the history's growth bound counts
/// it (`history::admission`): its registrant's network when the master
/// named one, else the network of the address it registered (its own);
/// `None` for a host name of unknown registrant (the poll path), which
/// no bound can attribute.
pub fn source(entry: &ServerEntry) -> Option<IpAddr> {
    let ip = match entry.registrant {
        Some(registrant) => registrant,
        None => entry.address.as_deref()?.parse::<IpAddr>().ok()?,
    };
    Some(address_key(ip))
}

/// One spelling per address: IP addresses in their canonical form (an
/// IPv4-mapped IPv6 address as IPv4), host names in lower case without a
/// final dot.
fn normalize(address: &str) -> String {
    match address.parse::<IpAddr>() {
        Ok(ip) => ip.to_canonical().to_string(),
        Err(_) => address.trim_end_matches('.').to_ascii_lowercase(),
    }
}

/// 32 random bytes: a new secret.
pub fn random_secret() -> Result<[u8; 32], Error> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(Error::Random)?;
    Ok(secret)
}

fn parse_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// Writes a new secret readable by its owner only, whole or not at all (a
/// temporary file linked into place), and never replaces a file: two
/// bridges starting on one directory end up with the same secret.
fn write_secret(dir: &Path, path: &PathBuf, secret: &[u8]) -> io::Result<()> {
    let temp = dir.join(format!(".{SECRET_FILE}.{}", std::process::id()));
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temp).and_then(|mut file| {
        let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
        writeln!(file, "{hex}")?;
        file.sync_all()
    });
    let linked = written.and_then(|()| fs::hard_link(&temp, path));
    let _ = fs::remove_file(&temp);
    linked
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::Stats;

    fn entry(name: &str, address: Option<&str>, port: Option<u16>) -> ServerEntry {
        ServerEntry {
            registrant: None,
            name: name.into(),
            address: address.map(Into::into),
            port,
            stats: Stats::default(),
        }
    }

    #[test]
    fn keys_follow_address_and_port_not_the_name() {
        let keys = Keys::from_secret(b"secret");
        let a = keys.key(&entry("Alpha", Some("192.0.2.1"), Some(20000)));
        assert_eq!(
            a,
            keys.key(&entry("Renamed", Some("192.0.2.1"), Some(20000)))
        );
        assert_eq!(
            a,
            keys.key(&entry("Alpha", Some("::ffff:192.0.2.1"), Some(20000)))
        );
        assert_ne!(a, keys.key(&entry("Alpha", Some("192.0.2.1"), Some(20001))));
        assert_ne!(a, keys.key(&entry("Alpha", Some("192.0.2.2"), Some(20000))));
        assert_eq!(
            keys.key(&entry("x", Some("Game.Example."), Some(1))),
            keys.key(&entry("y", Some("game.example"), Some(1)))
        );
        // Hidden addresses: keyed by name.
        let hidden = keys.key(&entry("Alpha", None, None));
        assert_eq!(hidden, keys.key(&entry("Alpha", None, Some(20000))));
        assert_ne!(hidden, keys.key(&entry("Beta", None, None)));
        // Claimed by another host: keyed by its network as well, the
        // same for every claim from that network, another for another.
        let claim = |registrant: &str| ServerEntry {
            registrant: Some(registrant.parse().unwrap()),
            ..entry("Alpha", Some("192.0.2.1"), Some(20000))
        };
        let twin = keys.key(&claim("198.51.100.7"));
        assert_ne!(twin, a, "a stranger's claim is not the server's key");
        assert_eq!(twin, keys.key(&claim("198.51.100.7")), "twins of one host");
        assert_ne!(twin, keys.key(&claim("198.51.100.8")));
        let v6 = keys.key(&claim("2001:db8::1"));
        assert_eq!(v6, keys.key(&claim("2001:db8::ffff:1")), "one /64");
        assert_ne!(v6, keys.key(&claim("2001:db8:0:1::1")));
        // Another secret: other keys.
        assert_ne!(
            a,
            Keys::from_secret(b"other").key(&entry("Alpha", Some("192.0.2.1"), Some(20000)))
        );
        assert_eq!(a.to_string().len(), 16);
    }

    #[test]
    fn the_source_is_the_registrants_network_or_the_servers_own() {
        let mut e = entry("Alpha", Some("2001:db8::5"), Some(20000));
        assert_eq!(source(&e), Some("2001:db8::".parse().unwrap()));
        e.registrant = Some("198.51.100.7".parse().unwrap());
        assert_eq!(source(&e), Some("198.51.100.7".parse().unwrap()));
        let by_name = entry("Alpha", Some("game.example"), Some(20000));
        assert_eq!(source(&by_name), None);
        assert_eq!(source(&entry("Alpha", None, None)), None);
    }

    #[test]
    fn the_secret_is_created_once_private_and_shared_by_copying() {
        let dir = tempfile::tempdir().unwrap();
        let e = entry("Alpha", Some("192.0.2.1"), Some(20000));
        let first = Keys::open(dir.path()).unwrap().key(&e);
        let path = dir.path().join(SECRET_FILE);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(Keys::open(dir.path()).unwrap().key(&e), first, "reread");
        let other = tempfile::tempdir().unwrap();
        assert_ne!(
            Keys::open(other.path()).unwrap().key(&e),
            first,
            "a new secret"
        );
        fs::copy(&path, other.path().join("copied")).unwrap();
        let twin = tempfile::tempdir().unwrap();
        fs::copy(&path, twin.path().join(SECRET_FILE)).unwrap();
        assert_eq!(
            Keys::open(twin.path()).unwrap().key(&e),
            first,
            "copied secret"
        );
        fs::write(&path, "short\n").unwrap();
        let err = Keys::open(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("key-secret") && err.contains("64 hex"),
            "{err}"
        );
    }
}
