//! The bridge's VAPID identity (RFC 8292): one P-256 key pair, created
//! once and kept in the store (so every bridge on one database, and the
//! same bridge after a restart, signs with it and browsers' subscriptions
//! stay valid), and the `Authorization: vapid t=…, k=…` header of a push,
//! a JWT (ES256) for the push service's origin. Tokens are signed once
//! per origin and reused until an hour before they expire: a push service
//! gets thousands of pushes for one event, and signing each would cost
//! as much as encrypting it.
//!
//! The token is written and signed here with `p256`'s ECDSA (RFC 7515's
//! ES256: SHA-256, the signature as `r || s`), not by a JWT crate: a VAPID
//! token is one fixed header and three claims, and `web-push-native`'s own
//! signer (`jwt-simple`) brings RSA, EdDSA and more that the bridge would
//! compile and never use.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use p256::ecdsa::{signature::Signer, Signature, SigningKey};
use url::Url;

/// Bytes of the private key (a P-256 scalar).
pub const SECRET_BYTES: usize = 32;
/// How long a token is valid (RFC 8292 allows at most 24 h).
const TOKEN_LIFE: Duration = Duration::from_secs(12 * 3600);
/// A token is signed again when it has less than this left.
const RENEW_BEFORE: Duration = Duration::from_secs(3600);
/// Origins whose tokens are kept at most (push services are a handful).
const MAX_ORIGINS: usize = 64;

/// The JWS header of every token, base64url: `{"typ":"JWT","alg":"ES256"}`.
const HEADER: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9";

/// Why a key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum VapidError {
    #[error("the stored VAPID key is not a P-256 private key")]
    BadKey,
    #[error("cannot sign a VAPID token: {0}")]
    Sign(String),
}

/// Why a contact (`--push-contact`) cannot be a token's `sub`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContactError {
    #[error("must be a mailto: or https: URI")]
    Scheme,
    #[error("must be mailto:someone@host")]
    Mailbox,
    #[error("must name a host")]
    NoHost,
    #[error("names a host push services refuse (localhost, .localhost, .invalid, or a loopback, private or unspecified address)")]
    Host,
    #[error("must not have a query or fragment")]
    Extra,
}

/// Whether a contact's host is one push services refuse: Apple's answers
/// 403 `BadJwtToken` to `@localhost` and `.invalid` subjects; a loopback
/// or private address names nobody either.
fn refused_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let ip = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>();
    if let Ok(ip) = ip {
        return match ip.to_canonical() {
            std::net::IpAddr::V4(v4) => {
                v4.is_loopback() || v4.is_private() || v4.is_unspecified() || v4.is_link_local()
            }
            std::net::IpAddr::V6(v6) => v6.is_loopback() || v6.is_unspecified(),
        };
    }
    host.is_empty()
        || host == "localhost"
        || host.ends_with(".localhost")
        || host == "invalid"
        || host.ends_with(".invalid")
}

/// The VAPID contact (a token's `sub`, RFC 8292 §2.1) `text` names: a
/// `mailto:` address or an `https:` URL (kept without a trailing `/`),
/// with a host push services accept. Mozilla's refuses tokens without
/// one, Apple's those whose contact it cannot resolve.
pub fn contact(text: &str) -> Result<String, ContactError> {
    let text = text.trim();
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ContactError::Scheme);
    }
    let lower = text.to_ascii_lowercase();
    if let Some(mailbox) = lower.strip_prefix("mailto:") {
        if mailbox.contains(['?', '#']) {
            return Err(ContactError::Extra);
        }
        let Some((local, host)) = mailbox.rsplit_once('@') else {
            return Err(ContactError::Mailbox);
        };
        if local.is_empty() || host.is_empty() || local.contains(',') {
            return Err(ContactError::Mailbox);
        }
        if refused_host(host) {
            return Err(ContactError::Host);
        }
        return Ok(text.to_owned());
    }
    let url = Url::parse(text).map_err(|_| ContactError::Scheme)?;
    if url.scheme() != "https" {
        return Err(ContactError::Scheme);
    }
    let host = url.host_str().ok_or(ContactError::NoHost)?;
    if refused_host(host) {
        return Err(ContactError::Host);
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ContactError::Extra);
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// A token's claims (RFC 8292 §2): who may accept it, until when, and
/// whom the push service can contact.
#[derive(serde::Serialize)]
struct Claims<'a> {
    aud: &'a str,
    exp: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub: Option<&'a str>,
}

/// The key pair and the tokens signed with it.
pub struct Vapid {
    key: SigningKey,
    /// The public key, uncompressed, base64url (`GET /api/push/key`).
    public: String,
    /// `sub`: the contact push services may write to ([`contact`]);
    /// `None` only in tests of the token's form.
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
        // 32 random bytes are a valid scalar unless they are zero or not
        // below the group's order: about one draw in 2^32.
        loop {
            let mut bytes = [0u8; SECRET_BYTES];
            if getrandom::fill(&mut bytes).is_err() {
                continue;
            }
            if let Ok(key) = SigningKey::from_slice(&bytes) {
                return key.to_bytes().to_vec();
            }
        }
    }

    /// The identity of a stored private key (`contact`: the JWT's `sub`).
    pub fn from_secret(secret: &[u8], contact: Option<String>) -> Result<Self, VapidError> {
        if secret.len() != SECRET_BYTES {
            return Err(VapidError::BadKey);
        }
        let key = SigningKey::from_slice(secret).map_err(|_| VapidError::BadKey)?;
        let public = URL_SAFE_NO_PAD.encode(key.verifying_key().to_encoded_point(false).as_bytes());
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
        let token = self.token(&origin)?;
        let header = format!("vapid t={token}, k={}", self.public);
        if tokens.len() >= MAX_ORIGINS {
            tokens.clear();
        }
        tokens.insert(origin, (header.clone(), now + TOKEN_LIFE - RENEW_BEFORE));
        Ok(header)
    }

    /// A token for `origin`, valid for [`TOKEN_LIFE`] from now.
    fn token(&self, origin: &str) -> Result<String, VapidError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| VapidError::Sign(format!("the clock is before 1970: {e}")))?;
        let claims = Claims {
            aud: origin,
            exp: (now + TOKEN_LIFE).as_secs(),
            sub: self.contact.as_deref(),
        };
        let claims = serde_json::to_vec(&claims).map_err(|e| VapidError::Sign(e.to_string()))?;
        let signed = format!("{HEADER}.{}", URL_SAFE_NO_PAD.encode(claims));
        let signature: Signature = self
            .key
            .try_sign(signed.as_bytes())
            .map_err(|e| VapidError::Sign(e.to_string()))?;
        Ok(format!(
            "{signed}.{}",
            URL_SAFE_NO_PAD.encode(signature.to_bytes())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contact_is_a_mailbox_or_an_https_url_push_services_accept() {
        for (text, kept) in [
            (
                "mailto:admin@lobby.example.org",
                "mailto:admin@lobby.example.org",
            ),
            ("https://lobby.example.org/", "https://lobby.example.org"),
            (
                "https://lobby.example.org/contact",
                "https://lobby.example.org/contact",
            ),
            (" https://203.0.113.9 ", "https://203.0.113.9"),
        ] {
            assert_eq!(contact(text).as_deref(), Ok(kept), "{text}");
        }
        for (text, why) in [
            ("", ContactError::Scheme),
            ("lobby.example.org", ContactError::Scheme),
            ("http://lobby.example.org", ContactError::Scheme),
            ("ftp://lobby.example.org", ContactError::Scheme),
            ("mailto:admin", ContactError::Mailbox),
            ("mailto:@lobby.example.org", ContactError::Mailbox),
            ("mailto:admin@", ContactError::Mailbox),
            ("mailto:admin@localhost", ContactError::Host),
            ("mailto:admin@lobby.invalid", ContactError::Host),
            ("mailto:a@b.example?subject=x", ContactError::Extra),
            ("https://localhost:8443", ContactError::Host),
            ("https://lobby.localhost", ContactError::Host),
            ("https://lobby.invalid.", ContactError::Host),
            ("https://127.0.0.1", ContactError::Host),
            ("https://[::1]", ContactError::Host),
            ("https://10.1.2.3", ContactError::Host),
            ("https://lobby.example.org/?a=b", ContactError::Extra),
            ("https://lobby.example.org/ x", ContactError::Scheme),
        ] {
            assert_eq!(contact(text), Err(why), "{text}");
        }
    }

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

    #[test]
    fn a_token_is_an_es256_jwt_for_the_origin_signed_by_the_served_key() {
        use p256::ecdsa::{signature::Verifier, VerifyingKey};

        let vapid = Vapid::from_secret(
            &Vapid::generate_secret(),
            Some("https://lobby.example".into()),
        )
        .unwrap();
        let header = vapid
            .authorization(&Url::parse("https://push.example:8443/x").unwrap())
            .unwrap();
        let token = header
            .strip_prefix("vapid t=")
            .and_then(|rest| rest.split(", k=").next())
            .unwrap();
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3, "{token}");
        let json = |part: &str| -> serde_json::Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
        };
        assert_eq!(
            json(parts[0]),
            serde_json::json!({"typ": "JWT", "alg": "ES256"})
        );
        let claims = json(parts[1]);
        assert_eq!(claims["aud"], "https://push.example:8443");
        assert_eq!(claims["sub"], "https://lobby.example");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let exp = claims["exp"].as_u64().unwrap();
        assert!(
            exp > now + 11 * 3600 && exp <= now + 12 * 3600 + 5,
            "exp {exp}, now {now}"
        );

        let point = URL_SAFE_NO_PAD.decode(vapid.public_key()).unwrap();
        let key = VerifyingKey::from_sec1_bytes(&point).unwrap();
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
        key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("the signature verifies with the served key");
        assert!(
            key.verify(format!("{}.{}x", parts[0], parts[1]).as_bytes(), &signature)
                .is_err(),
            "and only for what was signed"
        );

        let anonymous = Vapid::from_secret(&Vapid::generate_secret(), None).unwrap();
        let header = anonymous
            .authorization(&Url::parse("https://push.example/x").unwrap())
            .unwrap();
        let claims = header
            .strip_prefix("vapid t=")
            .unwrap()
            .split('.')
            .nth(1)
            .unwrap();
        assert!(json(claims).get("sub").is_none(), "no contact, no sub");
    }
}
