//! The master's change feed: what a bridge started with `--master` (which
//! follows the feed unless `--master-feed off`) sends to subscribe, and how the master refuses. Not part
//! of the specification's master protocol: the feed listens on a port of
//! its own, so a master that does not offer it (any other implementation)
//! is simply not reached there, and the bridge keeps polling.
//!
//! After the subscribe, the master sends the list with the delta messages
//! of [`crate::delta`] (`bridgeSnapshot`, then `bridgeDelta` per change,
//! addresses included), framed like every master message; an empty delta
//! whose `prev` and `seq` are the list's `seq` confirms the list is current
//! and doubles as the heartbeat.

use serde::{Deserialize, Serialize};

use crate::{
    delta::Resume,
    message::{Envelope, MessageError},
};

/// Command names of the feed's own messages.
pub mod names {
    /// The subscriber's first (and only) message.
    pub const SUBSCRIBE: &str = "feedSubscribe";
    /// The master's answer to a subscribe it does not serve; it then closes.
    pub const REFUSED: &str = "feedRefused";
}

/// The feed's port unless the master is told another: the one after the
/// specification's, so a bridge given only the master's address finds it.
pub const DEFAULT_PORT: u16 = crate::MASTER_PORT + 1;

/// Shortest heartbeat a subscriber may ask for: a master must not be made
/// to write more often than this to an idle bridge.
pub const MIN_HEARTBEAT_MS: u64 = 250;
/// Longest heartbeat a subscriber may ask for (and the default).
pub const MAX_HEARTBEAT_MS: u64 = 60_000;

/// `feedSubscribe`'s content.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeedSubscribe {
    /// The shared secret, when the master asks for one.
    pub token: Option<String>,
    /// The list the subscriber holds: the master sends what it missed
    /// (deltas still in its ring, or a snapshot).
    pub resume: Option<Resume>,
    /// How often the master must write at least something (an empty delta
    /// when nothing changed), so the subscriber can tell a hung master
    /// from a quiet one; clamped to [`MIN_HEARTBEAT_MS`]..=[`MAX_HEARTBEAT_MS`].
    pub heartbeat_ms: Option<u64>,
}

/// The wire form of [`FeedSubscribe`]'s content.
#[derive(Serialize, Deserialize)]
struct Content {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    epoch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    since: Option<u64>,
    #[serde(
        default,
        rename = "heartbeatMs",
        skip_serializing_if = "Option::is_none"
    )]
    heartbeat_ms: Option<u64>,
}

/// Why a subscribe could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedSubscribeError {
    #[error(transparent)]
    Message(#[from] MessageError),
    #[error("expected feedSubscribe, got {0}")]
    Command(String),
    #[error("feedSubscribe: {0}")]
    Content(String),
    #[error("feedSubscribe: `epoch` and `since` go together (send both or neither)")]
    Pair,
}

impl FeedSubscribe {
    /// The whole message, as the subscriber sends it (unframed).
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Message<'a> {
            command: &'static str,
            content: &'a Content,
        }
        let content = Content {
            token: self.token.clone(),
            epoch: self.resume.as_ref().map(|r| r.epoch.clone()),
            since: self.resume.as_ref().map(|r| r.since),
            heartbeat_ms: self.heartbeat_ms,
        };
        crate::json::to_string(&Message {
            command: names::SUBSCRIBE,
            content: &content,
        })
    }

    /// Reads a subscriber's first message. Unknown fields are ignored.
    pub fn parse(json: &[u8]) -> Result<Self, FeedSubscribeError> {
        let env = Envelope::parse(json)?;
        if env.command != names::SUBSCRIBE {
            return Err(FeedSubscribeError::Command(env.command));
        }
        let content = match env.content {
            None => Content {
                token: None,
                epoch: None,
                since: None,
                heartbeat_ms: None,
            },
            Some(v) => serde_json::from_value::<Content>(v)
                .map_err(|e| FeedSubscribeError::Content(e.to_string()))?,
        };
        let resume = match (content.epoch, content.since) {
            (Some(epoch), Some(since)) => Some(Resume { epoch, since }),
            (None, None) => None,
            _ => return Err(FeedSubscribeError::Pair),
        };
        Ok(Self {
            token: content.token,
            resume,
            heartbeat_ms: content.heartbeat_ms,
        })
    }

    /// The heartbeat asked for, within the allowed range (the longest when
    /// none was asked for).
    pub fn heartbeat(&self) -> std::time::Duration {
        let ms = self
            .heartbeat_ms
            .unwrap_or(MAX_HEARTBEAT_MS)
            .clamp(MIN_HEARTBEAT_MS, MAX_HEARTBEAT_MS);
        std::time::Duration::from_millis(ms)
    }
}

/// Why the master refused a subscriber (`feedRefused`'s `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeedRefusal {
    /// The token is missing or wrong.
    Token,
    /// The first message was not a readable `feedSubscribe`.
    Malformed,
}

impl FeedRefusal {
    /// The whole `feedRefused` message (unframed).
    pub fn to_json(self) -> String {
        #[derive(Serialize)]
        struct Content {
            reason: FeedRefusal,
        }
        #[derive(Serialize)]
        struct Message {
            command: &'static str,
            content: Content,
        }
        crate::json::to_string(&Message {
            command: names::REFUSED,
            content: Content { reason: self },
        })
    }

    /// The reason of a `feedRefused` whose envelope was read already;
    /// `None` for a reason this version does not know.
    pub fn from_content(content: Option<&serde_json::Value>) -> Option<Self> {
        let reason = content?.get("reason")?.clone();
        serde_json::from_value(reason).ok()
    }
}

impl std::fmt::Display for FeedRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Token => "the feed token is missing or wrong",
            Self::Malformed => "the subscribe was not understood",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscribe_round_trips_and_checks_its_pair() {
        let sub = FeedSubscribe {
            token: Some("secret".into()),
            resume: Some(Resume {
                epoch: "e1".into(),
                since: 7,
            }),
            heartbeat_ms: Some(1000),
        };
        let json = sub.to_json();
        assert_eq!(
            json,
            r#"{"command":"feedSubscribe","content":{"token":"secret","epoch":"e1","since":7,"heartbeatMs":1000}}"#
        );
        assert_eq!(FeedSubscribe::parse(json.as_bytes()), Ok(sub));
        let bare = FeedSubscribe::parse(br#"{"command":"feedSubscribe"}"#).unwrap();
        assert_eq!(bare, FeedSubscribe::default());
        assert_eq!(
            bare.heartbeat(),
            std::time::Duration::from_millis(MAX_HEARTBEAT_MS)
        );
        assert_eq!(
            FeedSubscribe::parse(br#"{"command":"feedSubscribe","content":{"since":3}}"#),
            Err(FeedSubscribeError::Pair)
        );
        assert!(matches!(
            FeedSubscribe::parse(br#"{"command":"msQueryGameServers"}"#),
            Err(FeedSubscribeError::Command(_))
        ));
        assert!(matches!(
            FeedSubscribe::parse(br#"{"command":"feedSubscribe","content":{"since":"x"}}"#),
            Err(FeedSubscribeError::Content(_))
        ));
        let fast = FeedSubscribe {
            heartbeat_ms: Some(1),
            ..FeedSubscribe::default()
        };
        assert_eq!(
            fast.heartbeat(),
            std::time::Duration::from_millis(MIN_HEARTBEAT_MS)
        );
    }

    #[test]
    fn refusals_name_their_reason() {
        let json = FeedRefusal::Token.to_json();
        assert_eq!(
            json,
            r#"{"command":"feedRefused","content":{"reason":"token"}}"#
        );
        let env = Envelope::parse(json.as_bytes()).unwrap();
        assert_eq!(env.command, names::REFUSED);
        assert_eq!(
            FeedRefusal::from_content(env.content.as_ref()),
            Some(FeedRefusal::Token)
        );
        assert_eq!(
            FeedRefusal::from_content(Some(&serde_json::json!({"reason": "later"}))),
            None
        );
    }
}
