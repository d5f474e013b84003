//! `bridgeSubscribe`'s content: whole lists or deltas, and the list a
//! resubscribing client continues from.

use serde_json::Value;

/// What a client holds and wants continued: the `epoch` and `seq` of its list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub epoch: String,
    pub since: u64,
}

/// `bridgeSubscribe`'s content. Without content (or with `deltas` false) a
/// subscriber gets whole `msRQueryGameServers` lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subscribe {
    pub deltas: bool,
    /// Only with `deltas`: the list to continue from.
    pub resume: Option<Resume>,
}

/// Why a `bridgeSubscribe` was refused; the text names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubscribeError {
    #[error("bridgeSubscribe: content must be a JSON object")]
    NotAnObject,
    #[error("bridgeSubscribe: `deltas` must be true or false")]
    Deltas,
    #[error("bridgeSubscribe: `epoch` must be a string")]
    Epoch,
    #[error("bridgeSubscribe: `since` must be a non-negative integer")]
    Since,
    #[error("bridgeSubscribe: `{0}` needs `{1}` (send both or neither)")]
    Pair(&'static str, &'static str),
}

impl Subscribe {
    /// Plain whole-list pushes.
    pub fn whole_lists() -> Self {
        Self::default()
    }

    /// Deltas, continuing from `resume` when given.
    pub fn deltas(resume: Option<Resume>) -> Self {
        Self {
            deltas: true,
            resume,
        }
    }

    /// Reads a subscribe's content. Unknown fields are ignored; `epoch` and
    /// `since` are read (and must be well-formed) only with `deltas`.
    pub fn from_content(content: Option<&Value>) -> Result<Self, SubscribeError> {
        let Some(content) = content else {
            return Ok(Self::default());
        };
        let obj = content.as_object().ok_or(SubscribeError::NotAnObject)?;
        let deltas = match obj.get("deltas") {
            None => false,
            Some(v) => v.as_bool().ok_or(SubscribeError::Deltas)?,
        };
        if !deltas {
            return Ok(Self::default());
        }
        let epoch = match obj.get("epoch") {
            None => None,
            Some(v) => Some(v.as_str().ok_or(SubscribeError::Epoch)?.to_owned()),
        };
        let since = match obj.get("since") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or(SubscribeError::Since)?),
        };
        let resume = match (epoch, since) {
            (Some(epoch), Some(since)) => Some(Resume { epoch, since }),
            (None, None) => None,
            (Some(_), None) => return Err(SubscribeError::Pair("epoch", "since")),
            (None, Some(_)) => return Err(SubscribeError::Pair("since", "epoch")),
        };
        Ok(Self { deltas, resume })
    }

    /// The content to send, `None` for a plain subscribe (no `content` key).
    pub fn to_content(&self) -> Option<Value> {
        if !self.deltas {
            return None;
        }
        let mut obj = serde_json::Map::new();
        obj.insert("deltas".into(), Value::Bool(true));
        if let Some(r) = &self.resume {
            obj.insert("epoch".into(), Value::String(r.epoch.clone()));
            obj.insert("since".into(), Value::from(r.since));
        }
        Some(Value::Object(obj))
    }
}
