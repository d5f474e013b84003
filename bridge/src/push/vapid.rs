//! The bridge's VAPID identity (RFC 8292): one P-256 key pair, created
//! once and kept in the store (so every bridge on one database, and the
//! same bridge after a restart, signs with it and browsers' subscriptions
//! stay valid), and the `Authorization: vapid t=…, k=…` header of a push,
//! a JWT (ES256) for the push service's origin. Tokens are signed once
//! per origin and reused until an hour before they expire: a push service
//! gets thousands of pushes for one event, and signing each would cost
//! as much as encrypting it.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use url::Url;
use web_push_native::jwt_simple::{
    algorithms::{ECDSAP256KeyPairLike, ECDSAP256PublicKeyLike, ES256KeyPair},
    claims::Claims,
};

/// Bytes of the private key (a P-256 scalar).
pub const SECRET_BYTES: usize = 32;
/// How long a token is valid (RFC 8292 allows at most 24 h).
const TOKEN_LIFE: Duration = Duration::from_secs(12 * 3600);
/// A token is signed again when it has less than this left.
const RENEW_BEFORE: Duration = Duration::from_secs(3600);
/// Origins whose tokens are kept at most (push services are a handful).
const MAX_ORIGINS: usize = 64;

/// Why a key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum VapidError {
    #[error("the stored VAPID key is not a P-256 private key")]
    BadKey,
    #[error("cannot sign a VAPID token: {0}")]
    Sign(String),
}

/// The key pair and the tokens signed with it.
pub struct Vapid {
    key: ES256KeyPair,
    /// The public key, uncompressed, base64url (`GET /api/push/key`).
    public: String,
    /// `sub`: the lobby's address, when the bridge knows it.
    contact: Option<String>,
    /// Per origin: the header's value and when it must be renewed.
    tokens: Mutex<HashMap<String, (String, Instant)>>,
}

impl std::fmt::Debug for Vapid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vapid")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl Vapid {
    /// A new private key, for the store to keep if it has none.
    pub fn generate_secret() -> Vec<u8> {
        ES256KeyPair::generate().to_bytes()
    }

    /// The identity of a stored private key (`contact`: the JWT's `sub`).
    pub fn from_secret(secret: &[u8], contact: Option<String>) -> Result<Self, VapidError> {
        if secret.len() != SECRET_BYTES {
            return Err(VapidError::BadKey);
        }
        let key = ES256KeyPair::from_bytes(secret).map_err(|_| VapidError::BadKey)?;
        let public = URL_SAFE_NO_PAD.encode(key.public_key().public_key().to_bytes_uncompressed());
        Ok(Self {
            key,
            public,
            contact,
            tokens: Mutex::new(HashMap::new()),
        })
    }

    /// The public key as `GET /api/push/key` gives it: the uncompressed
    /// point, base64url without padding (what `applicationServerKey`
    /// takes).
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// The `Authorization` header for a push to `endpoint`: its audience
    /// is the endpoint's origin (scheme, host and port).
    pub fn authorization(&self, endpoint: &Url) -> Result<String, VapidError> {
        let origin = endpoint.origin().ascii_serialization();
        let now = Instant::now();
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((header, renew_at)) = tokens.get(&origin) {
            if now < *renew_at {
                return Ok(header.clone());
            }
        }
        let life = web_push_native::jwt_simple::prelude::Duration::from_secs(TOKEN_LIFE.as_secs());
        let mut claims = Claims::create(life).with_audience(&origin);
        if let Some(contact) = &self.contact {
            claims = claims.with_subject(contact);
        }
        let token = self
            .key
            .sign(claims)
            .map_err(|e| VapidError::Sign(e.to_string()))?;
        let header = format!("vapid t={token}, k={}", self.public);
        if tokens.len() >= MAX_ORIGINS {
            tokens.clear();
        }
        tokens.insert(origin, (header.clone(), now + TOKEN_LIFE - RENEW_BEFORE));
        Ok(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_key_gives_the_same_public_key_and_one_token_per_origin() {
        let secret = Vapid::generate_secret();
        let a = Vapid::from_secret(&secret, None).unwrap();
        let b = Vapid::from_secret(&secret, Some("https://lobby.example".into())).unwrap();
        assert_eq!(a.public_key(), b.public_key());
        let point = URL_SAFE_NO_PAD.decode(a.public_key()).unwrap();
        assert_eq!((point.len(), point[0]), (65, 4));
        let one = Url::parse("https://push.example/a").unwrap();
        let two = Url::parse("https://push.example/b").unwrap();
        let other = Url::parse("https://push.example:8443/a").unwrap();
        let h = a.authorization(&one).unwrap();
        assert!(
            h.starts_with("vapid t=") && h.ends_with(a.public_key()),
            "{h}"
        );
        assert_eq!(a.authorization(&two).unwrap(), h, "one token per origin");
        assert_ne!(
            a.authorization(&other).unwrap(),
            h,
            "the port is part of it"
        );
        assert!(
            Vapid::from_secret(&[0; 32], None).is_err(),
            "zero is no key"
        );
        assert!(Vapid::from_secret(&secret[..31], None).is_err());
    }
}
