//! `A2S_RULES` replies: the server's console variables.

use serde::{Deserialize, Serialize};

use super::{expect_type, RULES};
use crate::{cursor::Cursor, error::DecodeError};

/// One server rule (console variable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub name: String,
    pub value: String,
}

/// Reads an `A2S_RULES` reply. A reply cut short (old engines truncate at
/// the MTU) is an error, not a silently shorter list.
pub fn decode_rules(reply: &[u8]) -> Result<Vec<Rule>, DecodeError> {
    let mut c = Cursor::new(reply);
    expect_type(&mut c, RULES, "A2S_RULES ('E')")?;
    let count = usize::from(c.u16("rule count")?);
    // Each rule takes at least two bytes: a count beyond that is a lie.
    let mut rules = Vec::with_capacity(count.min(c.remaining() / 2));
    for _ in 0..count {
        rules.push(Rule {
            name: c.cstr("rule name")?,
            value: c.cstr("rule value")?,
        });
    }
    if !c.is_empty() {
        return Err(DecodeError::TrailingBytes(c.remaining()));
    }
    Ok(rules)
}
