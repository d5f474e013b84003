//! `A2S_RULES` replies: the server's console variables.

use serde::{Deserialize, Serialize};

use super::{expect_type, RULES};
use crate::{cursor::Cursor, error::DecodeError, limits::Limits};

/// One server rule (console variable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub name: String,
    pub value: String,
}

/// Reads an `A2S_RULES` reply under [`Limits::DEFAULT`]. A reply cut short
/// (old engines truncate at the MTU) is an error, not a silently shorter
/// list.
pub fn decode_rules(reply: &[u8]) -> Result<Vec<Rule>, DecodeError> {
    decode_rules_with(reply, &Limits::DEFAULT)
}

/// [`decode_rules`] keeping what `limits` allow: the first `rules` rules
/// (the rest is still read, to check the reply), names and values cut to
/// `rule_name_chars` and `rule_value_chars` and cleaned.
pub fn decode_rules_with(reply: &[u8], limits: &Limits) -> Result<Vec<Rule>, DecodeError> {
    let mut c = Cursor::new(reply);
    expect_type(&mut c, RULES, "A2S_RULES ('E')")?;
    let count = usize::from(c.u16("rule count")?);
    // Each rule takes at least two bytes: a count beyond that is a lie.
    let mut rules = Vec::with_capacity(count.min(c.remaining() / 2).min(limits.rules));
    for _ in 0..count {
        let name = c.text("rule name", limits.rule_name_chars)?;
        let value = c.text("rule value", limits.rule_value_chars)?;
        if rules.len() < limits.rules {
            rules.push(Rule { name, value });
        }
    }
    if !c.is_empty() {
        return Err(DecodeError::TrailingBytes(c.remaining()));
    }
    Ok(rules)
}
