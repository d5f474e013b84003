//! "Is this master message the list?" decided once, cheaply: the bridge asks
//! it of every reply it relays, and lists are megabytes.

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::message::names;

/// Whether a master message is `msRQueryGameServers`: a JSON object whose
/// `command` is that string. Only `command` is read; the rest (the list,
/// megabytes with thousands of servers) is checked to be JSON but never
/// built into a `Value` tree, which cost most of the relay's CPU (profiled
/// with `make bench`: 80 % in allocation and `Value` construction).
///
/// The master's own compact form (`{"command":"msRQueryGameServers",...}`,
/// see [`crate::message::query_reply_json`]) is recognised by its first
/// bytes: even skipping the list cost most of what was left. This does not
/// vouch for the master's JSON beyond that (browsers parse it anyway);
/// other spellings get the full check.
pub fn is_query_reply(json: &[u8]) -> bool {
    const COMPACT: &[u8] = br#"{"command":"msRQueryGameServers","#;
    if json.starts_with(COMPACT) && json.ends_with(b"}") {
        return true;
    }
    serde_json::from_slice::<ReplyHead>(json).is_ok_and(|h| h.0)
}

/// The outcome of reading only a message's `command` (see [`is_query_reply`]).
struct ReplyHead(bool);

impl<'de> Deserialize<'de> for ReplyHead {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Head;
        impl<'de> Visitor<'de> for Head {
            type Value = ReplyHead;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ReplyHead, A::Error> {
                // Like a parsed object: the last `command` counts, and a
                // `command` that is not a string is an error.
                let mut is_reply = false;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "command" {
                        let command = map.next_value::<Cow<'de, str>>()?;
                        is_reply = command == names::QUERY_REPLY;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(ReplyHead(is_reply))
            }
        }
        d.deserialize_map(Head)
    }
}

#[cfg(test)]
mod tests {
    use super::is_query_reply;
    use crate::message::query_reply_json;

    #[test]
    fn recognises_list_replies_by_command_only() {
        assert!(is_query_reply(
            br#"{"command":"msRQueryGameServers","content":{"servers":[{"name":"a"}]}}"#
        ));
        assert!(is_query_reply(
            br#"{"content":{"servers":[]},"command":"msRQueryGameServers"}"#
        ));
        assert!(is_query_reply(br#"{"command":"msRQuery\u0047ameServers"}"#));
        assert!(!is_query_reply(br#"{"command":"msQueryGameServers"}"#));
        assert!(!is_query_reply(br#"{"command":1,"content":{}}"#));
        assert!(!is_query_reply(br#"["msRQueryGameServers"]"#));
        assert!(!is_query_reply(
            br#"{"command":"msRQueryGameServers","content":{"#
        ));
        assert!(!is_query_reply(br#"{"command":"msRQueryGameServers"} x"#));
        assert!(!is_query_reply(
            br#"{ "command":"msRQueryGameServers","command":"other"}"#
        ));
        assert!(is_query_reply(
            br#"{ "command" : "msRQueryGameServers", "content": {"servers": []} }"#
        ));
    }

    #[test]
    fn recognises_what_the_master_sends() {
        assert!(is_query_reply(&query_reply_json([])));
    }
}
