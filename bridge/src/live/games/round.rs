//! One refresh round's results, kept with typed errors until they are
//! rendered for a client: with addresses (admins, and everyone unless
//! `--hide-addresses`) or without them (viewers under `--hide-addresses`).

use std::net::SocketAddr;

use gamequery::{limits::clean_text, screen::Skipped};
use protocol::bridge::{GameServer, GameServers, GameSource, GameSourceKind};
use protocol::Addresses;

use super::{
    budget::ERROR_CHARS,
    error::{ServerError, SourceError},
};

/// Every source's results of one round, in the configured order.
#[derive(Debug, Default)]
pub struct Round {
    pub sources: Vec<SourceRound>,
}

/// One configured source's results.
#[derive(Debug)]
pub struct SourceRound {
    pub kind: GameSourceKind,
    /// The `host:port` as configured.
    pub label: String,
    pub error: Option<SourceError>,
    /// Records of a master's list that were not queried (GameAgent only).
    pub skipped: Skipped,
    pub servers: Vec<ServerRound>,
}

/// One server's results: what it said, or why it is offline.
#[derive(Debug)]
pub struct ServerRound {
    /// What it reported; for an offline server only its address and port.
    pub server: GameServer,
    pub error: Option<ServerError>,
}

impl SourceRound {
    /// A source with nothing yet.
    pub fn new(kind: GameSourceKind, label: &str) -> Self {
        Self {
            kind,
            label: label.to_owned(),
            error: None,
            skipped: Skipped::default(),
            servers: Vec::new(),
        }
    }
}

impl ServerRound {
    /// A server that answered.
    pub fn online(server: GameServer) -> Self {
        Self {
            server,
            error: None,
        }
    }

    /// A server that did not answer usably: `port` is the one to join.
    pub fn offline(addr: SocketAddr, port: u16, error: ServerError) -> Self {
        Self {
            server: GameServer {
                address: Some(addr.ip().to_string()),
                port: Some(port),
                online: false,
                ..GameServer::default()
            },
            error: Some(error),
        }
    }
}

/// What a source's `error` says about the records a master listed but the
/// bridge did not query; `None` when it queried them all. Never names an
/// address.
pub fn skipped_text(s: &Skipped) -> Option<String> {
    let total = s.total();
    if total == 0 {
        return None;
    }
    let mut parts = Vec::new();
    if s.non_global > 0 {
        parts.push(format!(
            "{} private or reserved {}",
            s.non_global,
            plural(s.non_global, "address", "addresses")
        ));
    }
    if s.duplicate > 0 {
        parts.push(format!(
            "{} {}",
            s.duplicate,
            plural(s.duplicate, "duplicate", "duplicates")
        ));
    }
    if s.bad_port > 0 {
        parts.push(format!("{} with port 0 or 65535", s.bad_port));
    }
    if s.over_cap > 0 {
        parts.push(format!("{} over the limit per master", s.over_cap));
    }
    Some(format!(
        "{total} listed {} skipped: {}",
        plural(total, "server", "servers"),
        parts.join(", ")
    ))
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

impl Round {
    /// The wire message. Without addresses: no server address or port, no
    /// address in any error, and A2S sources (whose label is the server's
    /// own address) numbered instead of named.
    pub fn render(&self, addresses: Addresses) -> GameServers {
        let with_address = addresses.shown();
        let hide_addresses = !with_address;
        let mut a2s_number = 0;
        let sources = self
            .sources
            .iter()
            .map(|s| {
                let (id, label) = match s.kind {
                    GameSourceKind::A2s if hide_addresses => {
                        a2s_number += 1;
                        (format!("a2s:{a2s_number}"), format!("server {a2s_number}"))
                    }
                    GameSourceKind::A2s => (format!("a2s:{}", s.label), s.label.clone()),
                    GameSourceKind::GameAgent => {
                        (format!("gameagent:{}", s.label), s.label.clone())
                    }
                };
                let error = s
                    .error
                    .as_ref()
                    .map(|e| clean_text(&e.text(with_address), ERROR_CHARS));
                let note = skipped_text(&s.skipped);
                let servers = s
                    .servers
                    .iter()
                    .map(|r| {
                        let mut server = r.server.clone();
                        server.error = r
                            .error
                            .as_ref()
                            .map(|e| clean_text(&e.text(with_address), ERROR_CHARS));
                        (server.address, server.port) =
                            addresses.show(server.address.take(), server.port);
                        server
                    })
                    .collect();
                GameSource {
                    id,
                    kind: s.kind,
                    label,
                    error,
                    note,
                    servers,
                }
            })
            .collect();
        GameServers { sources }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::visibility::Visibility;

    #[test]
    fn hidden_viewers_see_no_address_of_another_games_server() {
        let server = GameServer {
            address: Some("203.0.113.5".into()),
            port: Some(27015),
            online: true,
            name: "Alpha".into(),
            ..GameServer::default()
        };
        let round = Round {
            sources: vec![SourceRound {
                servers: vec![ServerRound::online(server)],
                ..SourceRound::new(GameSourceKind::A2s, "203.0.113.5:27015")
            }],
        };
        let text = |hide| {
            let viewers = Visibility::new(hide).viewers();
            serde_json::to_string(&round.render(viewers)).unwrap()
        };
        assert!(!text(true).contains("203.0.113.5"), "{}", text(true));
        assert!(text(true).contains("Alpha"));
        assert!(text(false).contains(r#""address":"203.0.113.5","port":27015"#));
        let admins = serde_json::to_string(&round.render(Visibility::ADMINS)).unwrap();
        assert_eq!(admins, text(false));
    }
}
