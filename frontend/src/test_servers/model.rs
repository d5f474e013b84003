//! One test server as the admin defined it, and what it sends: its
//! registration and stats, both encoded by the protocol crate.

use protocol::{Command, GameplayMode, Players, Registration, ServerEntry, Stats, ValidationError};
use serde::{Deserialize, Serialize};

/// One test server as the admin defined it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestServerDef {
    /// Local identity (stable across reloads), not sent anywhere.
    pub id: u64,
    pub name: String,
    pub address: String,
    pub port: u16,
    pub current: u32,
    pub max: u8,
    pub open: bool,
    /// 1 or 2, as on the wire.
    pub mode: u8,
}

impl TestServerDef {
    /// The registration, re-validated: a definition edited in storage by
    /// hand must not reach the bridge unchecked.
    pub fn registration(&self) -> Result<Registration, ValidationError> {
        Registration::new(&self.name, &self.address, u64::from(self.port))
    }

    /// The stats, clamped to what the protocol accepts.
    pub fn stats(&self) -> Stats {
        Stats {
            players: Players {
                current: self.current,
                max: self.max.clamp(2, 4),
            },
            is_lobby_open: self.open,
            gameplay_mode: GameplayMode::from_wire(u64::from(self.mode))
                .unwrap_or(GameplayMode::StandardA),
        }
    }

    /// `msRegisterGameServer`, or why the definition may not be sent.
    pub fn register_json(&self) -> Result<String, ValidationError> {
        Ok(Command::Register(self.registration()?).to_json())
    }

    /// `msUpdateGameServerStats` with [`Self::stats`].
    pub fn stats_json(&self) -> String {
        Command::UpdateStats(self.stats()).to_json()
    }

    /// Whether `entry` in the list is this server. A bridge that hides
    /// addresses leaves only the name to compare.
    pub fn is_listed_as(&self, entry: &ServerEntry) -> bool {
        entry.name == self.name
            && entry.address.as_deref().is_none_or(|a| a == self.address)
            && entry.port.is_none_or(|p| p == self.port)
    }
}

/// The next free local id.
pub fn next_id(defs: &[TestServerDef]) -> u64 {
    defs.iter().map(|d| d.id).max().map_or(1, |m| m + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_servers::samples::samples;

    #[test]
    fn frames_are_the_protocol_commands() {
        for d in &samples(1) {
            let stats = Stats::from_content(
                &serde_json::from_str::<serde_json::Value>(&d.stats_json()).unwrap()["content"],
            );
            assert_eq!(stats, Ok(d.stats()), "{d:?}");
        }
        let mut bad = samples(1)[0].clone();
        bad.port = 51963;
        assert_eq!(bad.register_json(), Err(ValidationError::PortReserved));
        bad.max = 9;
        assert_eq!(bad.stats().players.max, 4);
    }

    #[test]
    fn next_id_follows_the_highest() {
        assert_eq!(next_id(&samples(1)), 11);
        assert_eq!(next_id(&[]), 1);
    }

    #[test]
    fn listed_matching() {
        let d = &samples(1)[0];
        let mut e = crate::list::lobby::tests::entry("Feuerland", 0, 4, true, 1);
        e.address = Some(d.address.clone());
        e.port = Some(d.port);
        assert!(d.is_listed_as(&e));
        e.port = Some(1);
        assert!(!d.is_listed_as(&e));
        e.address = None;
        e.port = None;
        assert!(d.is_listed_as(&e));
    }
}
