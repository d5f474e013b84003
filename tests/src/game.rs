//! A game server as the master sees one: a raw TCP connection speaking the
//! length-prefixed JSON framing of `docs/protocol.md` §1. Dropping
//! it closes the connection, which unlists the server at once.

use std::{io::Write, net::SocketAddr, net::TcpStream};

use crate::HUNG;
use serde_json::{json, Value};

pub use lobby_testkit::fake_master::frame;

/// The stats a game server reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub current: u32,
    pub max: u8,
    pub open: bool,
    /// 1 = Standard A, 2 = Standard A+B.
    pub mode: u8,
}

impl Stats {
    /// `current` of 4 players, the lobby `open` or in game, Standard A:
    /// a server whose lobby and players a test changes.
    pub fn of_four(current: u32, open: bool) -> Stats {
        Stats {
            current,
            max: 4,
            open,
            mode: 1,
        }
    }
}

/// "Feuerland" at 192.168.0.10:20000, two of four players, its lobby
/// open, Standard A+B, registered at `master`: the server most scenarios
/// list.
pub fn open_feuerland(master: SocketAddr) -> GameServer {
    let stats = Stats {
        current: 2,
        max: 4,
        open: true,
        mode: 2,
    };
    GameServer::register(master, "Feuerland", "192.168.0.10", 20000, stats)
}

/// "Feuerland" at 192.0.2.10:20000, one of four players, its lobby
/// closed, registered at `product`'s master; with its key once the
/// bridge lists it: the server the notification tests watch open.
pub async fn closed_feuerland(product: &crate::product::Product) -> (GameServer, String) {
    let server = GameServer::register(
        product.master,
        "Feuerland",
        "192.0.2.10",
        20000,
        Stats::of_four(1, false),
    );
    let key = product.key_of("Feuerland").await;
    (server, key)
}

/// A registered game server; unregistered when dropped (the connection
/// closes).
pub struct GameServer {
    stream: TcpStream,
    /// The registered `serverName`.
    pub name: String,
}

impl GameServer {
    /// Connects to `master`, registers `name` at `address:port` and sends
    /// `stats`.
    pub fn register(
        master: SocketAddr,
        name: &str,
        address: &str,
        port: u16,
        stats: Stats,
    ) -> GameServer {
        let stream = TcpStream::connect_timeout(&master, HUNG)
            .unwrap_or_else(|e| panic!("connect to the master at {master}: {e}"));
        let mut server = GameServer {
            stream,
            name: name.to_owned(),
        };
        server.send(&json!({
            "command": "msRegisterGameServer",
            "content": {"serverName": name, "serverAddress": address, "serverPort": port}
        }));
        server.update(stats);
        server
    }

    /// Sends `msUpdateGameServerStats`.
    pub fn update(&mut self, stats: Stats) {
        self.send(&json!({
            "command": "msUpdateGameServerStats",
            "content": {
                "players": {"current": stats.current, "max": stats.max},
                "isLobbyOpen": stats.open,
                "gameplayMode": stats.mode
            }
        }));
    }

    fn send(&mut self, message: &Value) {
        self.stream
            .write_all(&frame(message))
            .expect("write to the master");
    }
}
