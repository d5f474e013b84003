//! Fake Serious Engine servers: a game server's GameAgent query port and a
//! GameAgent master listing game servers.

use std::{
    io,
    net::{Ipv4Addr, SocketAddr, SocketAddrV4},
    sync::{Arc, Mutex, PoisonError},
};

use super::FakeUdp;
use crate::gameagent::{self, Player, Status};

/// What a [`GameAgentServer`] says about itself.
#[derive(Debug)]
struct GameAgentState {
    status: Status,
    players: Vec<Player>,
}

/// The answers of a Serious Engine server's query port: status (0x02),
/// players (0x03; split at `packet_limit` bytes, the last packet sent
/// before the second so clients must collect out of order) and ping (0x04).
fn gameagent_handler(
    state: Arc<GameAgentState>,
    packet_limit: usize,
) -> impl Fn(&[u8]) -> Vec<Vec<u8>> + Send + Sync + 'static {
    move |req: &[u8]| match req {
        gameagent::STATUS_REQUEST => vec![gameagent::encode_status(&state.status)],
        gameagent::PLAYERS_REQUEST => {
            let count = u32::try_from(state.players.len()).unwrap_or(u32::MAX);
            let mut packets = gameagent::encode_players(count, &state.players, packet_limit);
            let n = packets.len();
            if n >= 3 {
                packets.swap(1, n - 1);
            }
            packets
        }
        gameagent::PING_REQUEST => vec![format!("\x04{}", state.status.players).into_bytes()],
        _ => Vec::new(),
    }
}

/// A Serious Engine game server's query port (game port + 1, see
/// [`gameagent::query_port`]), answering with the status and players it
/// started with, which a test can take offline.
#[derive(Debug)]
pub struct GameAgentServer {
    udp: FakeUdp,
}

impl GameAgentServer {
    /// Starts it on 127.0.0.1 with the engine's 1024-byte player packets.
    pub async fn start(status: Status, players: Vec<Player>) -> io::Result<Self> {
        Self::start_with(status, players, 1024).await
    }

    /// Like [`GameAgentServer::start`], splitting player replies at
    /// `packet_limit` bytes, to exercise multi-packet replies.
    pub async fn start_with(
        status: Status,
        players: Vec<Player>,
        packet_limit: usize,
    ) -> io::Result<Self> {
        let state = Arc::new(GameAgentState { status, players });
        // The game port is one below the query port, so port 1 would name
        // port 0; an ephemeral port never is that low, but stay correct.
        loop {
            let udp = FakeUdp::start(gameagent_handler(state.clone(), packet_limit)).await?;
            if udp.addr().port() > 1 {
                return Ok(Self { udp });
            }
        }
    }

    /// The query port's address (where the status and players come from).
    pub fn addr(&self) -> SocketAddr {
        self.udp.addr()
    }

    /// The address a master lists for it: the game port, one below the
    /// query port.
    pub fn game_addr(&self) -> SocketAddrV4 {
        game_addr(&self.udp)
    }

    /// `false`: it stops answering (see [`FakeUdp::set_answering`]).
    pub fn set_answering(&self, on: bool) {
        self.udp.set_answering(on);
    }

    /// The UDP server underneath, for its request counts.
    pub fn udp(&self) -> &FakeUdp {
        &self.udp
    }
}

/// The address a master lists for a query port served by `udp`: the game
/// port, one below it.
pub(super) fn game_addr(udp: &FakeUdp) -> SocketAddrV4 {
    let ip = match udp.addr().ip() {
        std::net::IpAddr::V4(ip) => ip,
        std::net::IpAddr::V6(_) => Ipv4Addr::LOCALHOST,
    };
    SocketAddrV4::new(ip, udp.addr().port().wrapping_sub(1))
}

/// A GameAgent master whose list (`'e'` request) names the given game
/// servers; the list can change while it runs, and it can go silent.
#[derive(Debug)]
pub struct GameAgentMaster {
    udp: FakeUdp,
    servers: Arc<Mutex<Vec<SocketAddrV4>>>,
}

impl GameAgentMaster {
    /// Starts it on 127.0.0.1, listing `servers` (game ports, as masters
    /// list them; see [`GameAgentServer::game_addr`]).
    pub async fn start(servers: Vec<SocketAddrV4>) -> io::Result<Self> {
        let servers = Arc::new(Mutex::new(servers));
        let list = servers.clone();
        let udp = FakeUdp::start(move |req: &[u8]| {
            if req == gameagent::MASTER_REQUEST {
                let list = list.lock().unwrap_or_else(PoisonError::into_inner);
                vec![gameagent::encode_master_list(&list)]
            } else {
                Vec::new()
            }
        })
        .await?;
        Ok(Self { udp, servers })
    }

    /// Its address, to pass to `--gameagent-master`.
    pub fn addr(&self) -> SocketAddr {
        self.udp.addr()
    }

    /// Replaces the list it sends from now on.
    pub fn set_servers(&self, servers: Vec<SocketAddrV4>) {
        *self.servers.lock().unwrap_or_else(PoisonError::into_inner) = servers;
    }

    /// `false`: it stops answering (see [`FakeUdp::set_answering`]).
    pub fn set_answering(&self, on: bool) {
        self.udp.set_answering(on);
    }

    /// The UDP server underneath, for its request counts.
    pub fn udp(&self) -> &FakeUdp {
        &self.udp
    }
}
