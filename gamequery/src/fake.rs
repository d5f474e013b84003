//! Fake game servers on UDP for tests (feature `fake`): [`FakeUdp`] answers
//! each datagram with what a handler returns, and [`A2sServer`],
//! [`GameAgentServer`] and [`GameAgentMaster`] play real servers from the
//! seeds' packet dumps, with switches for live changes and outages.
//!
//! The A2S replies are the fixtures in `tests/fixtures/` (the seeds' hex
//! dumps), included at compile time, so they ship with the crate.

use std::{
    io,
    net::{Ipv4Addr, SocketAddr, SocketAddrV4},
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc, Mutex, PoisonError,
    },
    time::Duration,
};

use tokio::{
    net::UdpSocket,
    task::{JoinHandle, JoinSet},
};

use crate::{
    a2s,
    gameagent::{self, Player, Status},
    packet::{self, SplitLayout},
};

const CS_SOURCE_INFO: &str = include_str!("../tests/fixtures/ru_cs_source_info.hex");
const INFO_CHALLENGE: &str = include_str!("../tests/fixtures/ru_info_challenge.hex");
const INFO_REQUEST_CHALLENGE: &str =
    include_str!("../tests/fixtures/ru_info_request_challenge.hex");
const PLAYERS: &str = include_str!("../tests/fixtures/ru_players.hex");
const RULES_SPLIT_0: &str = include_str!("../tests/fixtures/ru_rules_split_0.hex");
const RULES_SPLIT_1: &str = include_str!("../tests/fixtures/ru_rules_split_1.hex");

/// The map in the seed's CS:S info reply, which [`A2sServer`] swaps out.
const SEED_MAP: &str = "de_dust";

/// The map [`A2sServer`] reports after [`A2sServer::set_alternate_map`], so
/// a test can watch a live change arrive.
pub const ALTERNATE_MAP: &str = "de_nuke";

/// The challenge number of the seed's `S2C_CHALLENGE` reply, which the fake
/// A2S server hands out and then requires, so clients must do the round trip.
pub const CHALLENGE: i32 = i32::from_le_bytes([0x0A, 0x08, 0x5E, 0xEA]);

/// Reads a hex dump like the fixtures (`FF FF 41 …`, any whitespace), so
/// tests can use the seeds' packets. Panics on a malformed dump: the dumps
/// are constants, and a broken one is a bug in the test.
pub fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap_or_else(|e| panic!("bad hex byte {b:?}: {e}")))
        .collect()
}

/// The seed's CS:S `A2S_INFO` reply (whole packet, `-1` header first): what
/// [`A2sServer`] answers, for tests to decode their expectations from.
pub fn cs_source_info() -> Vec<u8> {
    hex(CS_SOURCE_INFO)
}

/// The seed's `A2S_PLAYER` reply (whole packet): what [`A2sServer`] answers.
pub fn cs_source_players() -> Vec<u8> {
    hex(PLAYERS)
}

/// The seed's `A2S_RULES` reply as one packet (`-1` header first),
/// reassembled from its two split packets; [`A2sServer`] sends it split and
/// compressed.
pub fn cs_source_rules() -> Vec<u8> {
    let parts = [hex(RULES_SPLIT_0), hex(RULES_SPLIT_1)];
    let reply = packet::reassemble(&[&parts[0], &parts[1]], None)
        .unwrap_or_else(|e| panic!("the seed's rules do not reassemble: {e}"));
    let mut whole = packet::SINGLE.to_le_bytes().to_vec();
    whole.extend_from_slice(&reply);
    whole
}

/// How a [`FakeUdp`] misbehaves, for tests of retries and concurrency.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to bind; port 0 picks a free one.
    pub bind: SocketAddr,
    /// Requests ignored before the first answer (lost packets).
    pub drop_first: usize,
    /// Time between a request and its replies (a slow server).
    pub delay: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            drop_first: 0,
            delay: Duration::ZERO,
        }
    }
}

/// A UDP server answering each request with the datagrams its handler
/// returns; the one building block of every fake here. Its task (and any
/// delayed replies) ends when it is dropped.
#[derive(Debug)]
pub struct FakeUdp {
    addr: SocketAddr,
    answering: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    max_outstanding: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl FakeUdp {
    /// Binds 127.0.0.1 on a free port and answers every request at once.
    pub async fn start<F>(handler: F) -> io::Result<Self>
    where
        F: Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
    {
        Self::start_with(Options::default(), handler).await
    }

    /// Like [`FakeUdp::start`], with lost requests, a delay or a fixed
    /// address.
    pub async fn start_with<F>(options: Options, handler: F) -> io::Result<Self>
    where
        F: Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
    {
        let socket = Arc::new(UdpSocket::bind(options.bind).await?);
        let addr = socket.local_addr()?;
        let answering = Arc::new(AtomicBool::new(true));
        let requests = Arc::new(AtomicUsize::new(0));
        let max_outstanding = Arc::new(AtomicUsize::new(0));
        let task = tokio::spawn(serve(
            socket,
            options,
            handler,
            answering.clone(),
            requests.clone(),
            max_outstanding.clone(),
        ));
        Ok(Self {
            addr,
            answering,
            requests,
            max_outstanding,
            task,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Requests received so far, dropped and unanswered ones included.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// The most requests whose replies were pending at once (with a delay),
    /// to check a client's concurrency cap.
    pub fn max_outstanding(&self) -> usize {
        self.max_outstanding.load(Ordering::SeqCst)
    }

    /// `false` takes the server offline: it keeps its port but answers
    /// nothing, like a crashed host; `true` brings it back.
    pub fn set_answering(&self, on: bool) {
        self.answering.store(on, Ordering::SeqCst);
    }
}

impl Drop for FakeUdp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The receive loop. Delayed replies run in a `JoinSet` it owns, so they
/// are aborted with it.
async fn serve<F>(
    socket: Arc<UdpSocket>,
    options: Options,
    handler: F,
    answering: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    max_outstanding: Arc<AtomicUsize>,
) where
    F: Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
{
    let outstanding = Arc::new(AtomicUsize::new(0));
    let mut delayed = JoinSet::new();
    let mut buf = vec![0u8; 65_536];
    loop {
        let Ok((n, from)) = socket.recv_from(&mut buf).await else {
            return;
        };
        while delayed.try_join_next().is_some() {}
        let seen = requests.fetch_add(1, Ordering::SeqCst);
        if seen < options.drop_first || !answering.load(Ordering::SeqCst) {
            continue;
        }
        let replies = handler(buf.get(..n).unwrap_or_default());
        let now = outstanding.fetch_add(1, Ordering::SeqCst) + 1;
        max_outstanding.fetch_max(now, Ordering::SeqCst);
        if options.delay.is_zero() {
            send_all(&socket, &replies, from).await;
            outstanding.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let (socket, outstanding, delay) = (socket.clone(), outstanding.clone(), options.delay);
        delayed.spawn(async move {
            tokio::time::sleep(delay).await;
            send_all(&socket, &replies, from).await;
            outstanding.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

async fn send_all(socket: &UdpSocket, replies: &[Vec<u8>], to: SocketAddr) {
    for p in replies {
        // A fake does not care whether the client is still there.
        let _ = socket.send_to(p, to).await;
    }
}

/// Replaces the seed's map in an info reply; both names have 7 bytes, so
/// nothing else moves.
fn with_map(info: &[u8], map: &str) -> Vec<u8> {
    let mut out = info.to_vec();
    let from = SEED_MAP.as_bytes();
    if map.len() == from.len() {
        if let Some(at) = out.windows(from.len()).position(|w| w == from) {
            out[at..at + from.len()].copy_from_slice(map.as_bytes());
        }
    }
    out
}

/// The answers of a current Source server: every request without
/// [`CHALLENGE`] gets the seed's `S2C_CHALLENGE`; with it, `A2S_INFO` gets
/// the seed's CS:S reply (on [`ALTERNATE_MAP`] while `alternate` is set),
/// `A2S_PLAYER` the seed's players and `A2S_RULES` the `rules` packets as
/// given. Exposed so tests can wrap it (drop a packet, count replies).
pub fn a2s_handler(
    rules: Vec<Vec<u8>>,
    alternate: Arc<AtomicBool>,
) -> impl Fn(&[u8]) -> Vec<Vec<u8>> + Send + Sync + 'static {
    let info = cs_source_info();
    let switched = with_map(&info, ALTERNATE_MAP);
    let players = cs_source_players();
    let challenge = hex(INFO_CHALLENGE);
    let info_request = hex(INFO_REQUEST_CHALLENGE);
    let players_request = a2s::players_request(CHALLENGE);
    let rules_request = a2s::rules_request(CHALLENGE);
    move |req: &[u8]| {
        if req == info_request {
            if alternate.load(Ordering::SeqCst) {
                vec![switched.clone()]
            } else {
                vec![info.clone()]
            }
        } else if req == players_request {
            vec![players.clone()]
        } else if req == rules_request {
            rules.clone()
        } else if matches!(req.get(4), Some(b'T' | b'U' | b'V')) {
            vec![challenge.clone()]
        } else {
            Vec::new()
        }
    }
}

/// A Counter-Strike: Source server from the seeds: it requires the
/// challenge round trip, sends its rules as bzip2-compressed Source split
/// packets in reverse order, and can change its map or go offline.
#[derive(Debug)]
pub struct A2sServer {
    udp: FakeUdp,
    alternate: Arc<AtomicBool>,
}

impl A2sServer {
    /// Starts it on 127.0.0.1, on the seed's map.
    pub async fn start() -> io::Result<Self> {
        let mut rules = packet::split(&cs_source_rules(), 42, SplitLayout::Source, 500, true);
        rules.reverse();
        let alternate = Arc::new(AtomicBool::new(false));
        let udp = FakeUdp::start(a2s_handler(rules, alternate.clone())).await?;
        Ok(Self { udp, alternate })
    }

    /// Its address, to pass to `--a2s`.
    pub fn addr(&self) -> SocketAddr {
        self.udp.addr()
    }

    /// `true`: the server now plays [`ALTERNATE_MAP`]; `false`: the seed's
    /// map again.
    pub fn set_alternate_map(&self, on: bool) {
        self.alternate.store(on, Ordering::SeqCst);
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

/// What a [`GameAgentServer`] says about itself.
#[derive(Debug, Clone)]
struct GameAgentState {
    status: Status,
    players: Vec<Player>,
}

/// The answers of a Serious Engine server's query port: status (0x02),
/// players (0x03; split at `packet_limit` bytes, the last packet sent
/// before the second so clients must collect out of order) and ping (0x04).
fn gameagent_handler(
    state: Arc<Mutex<GameAgentState>>,
    packet_limit: usize,
) -> impl Fn(&[u8]) -> Vec<Vec<u8>> + Send + Sync + 'static {
    move |req: &[u8]| {
        let state = state.lock().unwrap_or_else(PoisonError::into_inner);
        match req {
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
}

/// A Serious Engine game server's query port (game port + 1, see
/// [`gameagent::query_port`]), whose status and players a test can change
/// while it runs, or take offline.
#[derive(Debug)]
pub struct GameAgentServer {
    udp: FakeUdp,
    state: Arc<Mutex<GameAgentState>>,
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
        let state = Arc::new(Mutex::new(GameAgentState { status, players }));
        // The game port is one below the query port, so port 1 would name
        // port 0; an ephemeral port never is that low, but stay correct.
        loop {
            let udp = FakeUdp::start(gameagent_handler(state.clone(), packet_limit)).await?;
            if udp.addr().port() > 1 {
                return Ok(Self { udp, state });
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
        let ip = match self.udp.addr().ip() {
            std::net::IpAddr::V4(ip) => ip,
            std::net::IpAddr::V6(_) => Ipv4Addr::LOCALHOST,
        };
        SocketAddrV4::new(ip, self.udp.addr().port().wrapping_sub(1))
    }

    /// Replaces the status it reports from now on.
    pub fn set_status(&self, status: Status) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .status = status;
    }

    /// Replaces the players it reports from now on.
    pub fn set_players(&self, players: Vec<Player>) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .players = players;
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
