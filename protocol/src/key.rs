//! A server's key (`docs/protocol.md` §2.2): 16 lowercase hex digits that
//! name one server by its address and port across registrations, renames
//! and restarts of the bridge. The bridge computes it (a keyed hash, so
//! the key reveals nothing); everyone else only carries and compares it.

use std::{fmt, str::FromStr};

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// A server's key: 64 bits, written as 16 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerKey(pub u64);

/// Why a text is not a server key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a server key is 16 lowercase hex digits")]
pub struct BadKey;

impl fmt::Display for ServerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl FromStr for ServerKey {
    type Err = BadKey;

    /// Exactly 16 digits `0-9a-f`: one key has one spelling, so it can name
    /// a page or a cache entry.
    fn from_str(s: &str) -> Result<Self, BadKey> {
        if s.len() != 16 || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(BadKey);
        }
        u64::from_str_radix(s, 16)
            .map(ServerKey)
            .map_err(|_| BadKey)
    }
}

impl Serialize for ServerKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ServerKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = ServerKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("16 lowercase hex digits")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ServerKey, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(Visitor)
    }
}

/// Written as a string of exactly 16 lowercase hex digits.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for ServerKey {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^[0-9a-f]{16}$"))
            .description(Some(
                "A server's key: 16 lowercase hex digits naming it by address and port",
            ))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for ServerKey {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_only() {
        let key = ServerKey(0x00ab_cdef_0123_4567);
        assert_eq!(key.to_string(), "00abcdef01234567");
        assert_eq!("00abcdef01234567".parse(), Ok(key));
        for bad in [
            "00ABCDEF01234567",
            "abc",
            "00abcdef012345678",
            "+0abcdef01234567",
            "00abcdef0123456g",
        ] {
            assert_eq!(bad.parse::<ServerKey>(), Err(BadKey), "{bad}");
        }
        let json = serde_json::to_string(&key).unwrap();
        assert_eq!(json, r#""00abcdef01234567""#);
        assert_eq!(serde_json::from_str::<ServerKey>(&json).unwrap(), key);
    }
}
