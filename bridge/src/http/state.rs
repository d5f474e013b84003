//! A server's state as the HTTP answers read it: listed now, or its last
//! recorded state (the details, the badges, the cards and the pages'
//! previews are drawn from it).

use protocol::{entry::ServerDetails, join::JoinTemplate, GameplayMode, Players, ServerKey};

use crate::{db::store::ServerSample, visibility::Visibility};

/// A server's state now: listed (online) or its last recorded state.
pub(crate) struct ServerState {
    pub(crate) sample: ServerSample,
    pub(crate) online: bool,
    pub(crate) first_seen: i64,
    pub(crate) last_seen: i64,
    /// The history holds it (a server listed since the last sample, or
    /// left out by the history's bounds, is listed but not recorded).
    pub(crate) recorded: bool,
}

impl ServerState {
    /// The answer of `GET /api/servers/{key}`, made only as viewers may
    /// see it (`visibility`), with its Join link from `join` where they see
    /// the address; `None` for a recorded mode the protocol does not know
    /// (a damaged row).
    pub(crate) fn details(
        &self,
        key: ServerKey,
        visibility: &Visibility,
        join: Option<&JoinTemplate>,
    ) -> Option<ServerDetails> {
        let s = &self.sample;
        let details = ServerDetails {
            key,
            name: s.name.clone(),
            address: s.address.clone(),
            port: s.port,
            online: self.online,
            players: Players {
                current: s.players,
                max: s.max,
            },
            is_lobby_open: s.open,
            gameplay_mode: GameplayMode::from_wire(u64::from(s.mode)).ok()?,
            first_seen: self.first_seen,
            last_seen: self.last_seen,
            recorded: self.recorded,
            join_url: None,
        };
        Some(visibility.details(details, join))
    }
}
