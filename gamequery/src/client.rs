//! Async queries over tokio UDP: one fresh socket per attempt (so a late
//! reply to an earlier attempt cannot be mistaken for this one), a time
//! limit per attempt, retries, and a cap on queries in flight.

use std::{
    net::{SocketAddr, SocketAddrV4},
    sync::Arc,
    time::Duration,
};

use tokio::{
    net::UdpSocket,
    sync::Semaphore,
    time::{timeout_at, Instant},
};
use tracing::debug;

use crate::{
    a2s::{self, Info, Player, Rule},
    error::{DecodeError, QueryError},
    gameagent::{self, PlayersAssembler, Status},
    limits::Limits,
    packet::{Reassembler, SplitLayout},
};

/// Largest A2S datagram we read; replies are at most ~1400 bytes per
/// packet, but a server may send more (at most 15 of them per reply, see
/// [`crate::packet::MAX_PACKETS`]).
const A2S_BUFFER: usize = 65_536;
/// Largest GameAgent master list we read: one datagram of 6-byte records.
const MASTER_BUFFER: usize = 65_536;
/// A GameAgent server's packets are at most [`gameagent::MAX_PACKET`]
/// bytes; one byte more shows a longer one (the kernel cuts a datagram to
/// the buffer), which the decoders refuse.
const GAMEAGENT_BUFFER: usize = gameagent::MAX_PACKET + 1;
/// Challenges one attempt follows before giving up.
const MAX_CHALLENGES: usize = 3;
/// How long a GameAgent player reply may wait for packets between its first
/// and last once both are in.
const PLAYERS_SETTLE: Duration = Duration::from_millis(150);

/// How patient queries are.
#[derive(Debug, Clone)]
pub struct QueryOptions {
    /// Time limit of one attempt (including a challenge round trip).
    pub timeout: Duration,
    /// Attempts after the first one fails.
    pub retries: u32,
    /// The servers' split layout, if known; `None` detects it per reply.
    pub layout: Option<SplitLayout>,
    /// Queries in flight at once, per [`Client`].
    pub max_in_flight: usize,
    /// What the decoders keep of each reply.
    pub limits: Limits,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(1),
            retries: 2,
            layout: None,
            max_in_flight: 64,
            limits: Limits::DEFAULT,
        }
    }
}

/// Sends queries; cheap to clone (clones share the concurrency cap).
#[derive(Debug, Clone)]
pub struct Client {
    opts: QueryOptions,
    slots: Arc<Semaphore>,
}

/// What one attempt ended with.
enum Attempt<T> {
    Done(T),
    TimedOut,
    Failed(QueryError),
}

impl Client {
    pub fn new(opts: QueryOptions) -> Self {
        let slots = Arc::new(Semaphore::new(opts.max_in_flight.max(1)));
        Self { opts, slots }
    }

    pub fn options(&self) -> &QueryOptions {
        &self.opts
    }

    /// Runs `attempt` up to `1 + retries` times under one concurrency permit.
    async fn run<T, F, Fut>(&self, addr: SocketAddr, mut attempt: F) -> Result<T, QueryError>
    where
        F: FnMut(UdpSocket, Instant) -> Fut,
        Fut: std::future::Future<Output = Attempt<T>>,
    {
        // The semaphore is never closed, so acquiring only fails if it were.
        let _permit = self.slots.acquire().await.ok();
        let attempts = self.opts.retries.saturating_add(1);
        let mut last = None;
        for n in 0..attempts {
            let socket = bind_connected(addr)
                .await
                .map_err(|source| QueryError::Io { addr, source })?;
            let deadline = Instant::now() + self.opts.timeout;
            match attempt(socket, deadline).await {
                Attempt::Done(v) => return Ok(v),
                Attempt::TimedOut => debug!(%addr, attempt = n + 1, "no reply"),
                Attempt::Failed(e) => {
                    debug!(%addr, attempt = n + 1, error = %e, "query failed");
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or(QueryError::Timeout { addr, attempts }))
    }

    /// One A2S exchange: sends `request(challenge)`, follows `'A'`
    /// challenges, returns the reply (type byte first) and the round-trip
    /// time of the last request.
    async fn a2s_exchange(
        &self,
        addr: SocketAddr,
        request: fn(Option<i32>) -> Vec<u8>,
    ) -> Result<(Vec<u8>, Duration), QueryError> {
        let layout = self.opts.layout;
        self.run(addr, |socket, deadline| async move {
            let mut challenge = None;
            for _ in 0..=MAX_CHALLENGES {
                let sent = Instant::now();
                if let Err(source) = socket.send(&request(challenge)).await {
                    return Attempt::Failed(QueryError::Io { addr, source });
                }
                let reply = match recv_reply(&socket, deadline, layout).await {
                    Ok(Some(reply)) => reply,
                    Ok(None) => return Attempt::TimedOut,
                    Err(RecvError::Io(source)) => {
                        return Attempt::Failed(QueryError::Io { addr, source })
                    }
                    Err(RecvError::Decode(e)) => return Attempt::Failed(decode(addr, e)),
                };
                let rtt = sent.elapsed();
                if a2s::reply_type(&reply) == Ok(a2s::CHALLENGE) {
                    match a2s::decode_challenge(&reply) {
                        Ok(c) => challenge = Some(c),
                        Err(e) => return Attempt::Failed(decode(addr, e)),
                    }
                    continue;
                }
                return Attempt::Done((reply, rtt));
            }
            Attempt::Failed(QueryError::ChallengeLoop(addr))
        })
        .await
    }

    /// `A2S_INFO` (with the challenge round trip when the server asks for
    /// it), and the round-trip time of the answered request.
    pub async fn a2s_info(&self, addr: SocketAddr) -> Result<(Info, Duration), QueryError> {
        let (reply, rtt) = self.a2s_exchange(addr, a2s::info_request).await?;
        let info = a2s::decode_info_with(&reply, &self.opts.limits).map_err(|e| decode(addr, e))?;
        Ok((info, rtt))
    }

    /// `A2S_PLAYER`; `the_ship` from the info's AppID ([`a2s::is_the_ship`]).
    pub async fn a2s_players(
        &self,
        addr: SocketAddr,
        the_ship: bool,
    ) -> Result<Vec<Player>, QueryError> {
        let (reply, _) = self
            .a2s_exchange(addr, |c| {
                a2s::players_request(c.unwrap_or(a2s::NO_CHALLENGE))
            })
            .await?;
        a2s::decode_players_with(&reply, the_ship, &self.opts.limits).map_err(|e| decode(addr, e))
    }

    /// `A2S_RULES`.
    pub async fn a2s_rules(&self, addr: SocketAddr) -> Result<Vec<Rule>, QueryError> {
        let (reply, _) = self
            .a2s_exchange(addr, |c| a2s::rules_request(c.unwrap_or(a2s::NO_CHALLENGE)))
            .await?;
        a2s::decode_rules_with(&reply, &self.opts.limits).map_err(|e| decode(addr, e))
    }

    /// Sends one GameAgent request and decodes its one-packet reply, read
    /// into `buffer` bytes.
    async fn gameagent_single<T>(
        &self,
        addr: SocketAddr,
        request: &'static [u8],
        buffer: usize,
        parse: impl Fn(&[u8]) -> Result<T, DecodeError> + Copy,
    ) -> Result<(T, Duration), QueryError> {
        self.run(addr, |socket, deadline| async move {
            let sent = Instant::now();
            if let Err(source) = socket.send(request).await {
                return Attempt::Failed(QueryError::Io { addr, source });
            }
            let mut buf = vec![0u8; buffer];
            match timeout_at(deadline, socket.recv(&mut buf)).await {
                Err(_) => Attempt::TimedOut,
                Ok(Err(source)) => Attempt::Failed(QueryError::Io { addr, source }),
                Ok(Ok(n)) => match parse(buf.get(..n).unwrap_or_default()) {
                    Ok(v) => Attempt::Done((v, sent.elapsed())),
                    Err(e) => Attempt::Failed(decode(addr, e)),
                },
            }
        })
        .await
    }

    /// A GameAgent master's list: the servers' game ports (query port + 1).
    pub async fn gameagent_master(
        &self,
        master: SocketAddr,
    ) -> Result<Vec<SocketAddrV4>, QueryError> {
        let (list, _) = self
            .gameagent_single(
                master,
                gameagent::MASTER_REQUEST,
                MASTER_BUFFER,
                gameagent::decode_master_list,
            )
            .await?;
        Ok(list)
    }

    /// A GameAgent server's status; `addr` is its query port (game port + 1).
    pub async fn gameagent_status(
        &self,
        addr: SocketAddr,
    ) -> Result<(Status, Duration), QueryError> {
        let limits = &self.opts.limits;
        self.gameagent_single(addr, gameagent::STATUS_REQUEST, GAMEAGENT_BUFFER, |reply| {
            gameagent::decode_status_with(reply, limits)
        })
        .await
    }

    /// A GameAgent ping: the player count and the round-trip time.
    pub async fn gameagent_ping(&self, addr: SocketAddr) -> Result<(u32, Duration), QueryError> {
        self.gameagent_single(
            addr,
            gameagent::PING_REQUEST,
            GAMEAGENT_BUFFER,
            gameagent::decode_ping,
        )
        .await
    }

    /// A GameAgent server's players, from however many packets they take
    /// (at most [`gameagent::MAX_PLAYER_PACKETS`]).
    pub async fn gameagent_players(
        &self,
        addr: SocketAddr,
    ) -> Result<Vec<gameagent::Player>, QueryError> {
        let limits = self.opts.limits;
        self.run(addr, |socket, deadline| async move {
            if let Err(source) = socket.send(gameagent::PLAYERS_REQUEST).await {
                return Attempt::Failed(QueryError::Io { addr, source });
            }
            let mut assembler = PlayersAssembler::with_limits(limits);
            let mut buf = vec![0u8; GAMEAGENT_BUFFER];
            let mut until = deadline;
            loop {
                match timeout_at(until, socket.recv(&mut buf)).await {
                    Err(_) if assembler.has_ends() => return Attempt::Done(assembler.players()),
                    Err(_) => return Attempt::TimedOut,
                    Ok(Err(source)) => return Attempt::Failed(QueryError::Io { addr, source }),
                    Ok(Ok(n)) => match assembler.push(buf.get(..n).unwrap_or_default()) {
                        Ok(Some(players)) => return Attempt::Done(players),
                        Ok(None) if assembler.has_ends() => {
                            until = until.min(Instant::now() + PLAYERS_SETTLE);
                        }
                        Ok(None) => {}
                        Err(e) => return Attempt::Failed(decode(addr, e)),
                    },
                }
            }
        })
        .await
    }
}

fn decode(addr: SocketAddr, source: DecodeError) -> QueryError {
    QueryError::Decode { addr, source }
}

async fn bind_connected(addr: SocketAddr) -> std::io::Result<UdpSocket> {
    let local: SocketAddr = if addr.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = UdpSocket::bind(local).await?;
    socket.connect(addr).await?;
    Ok(socket)
}

enum RecvError {
    /// Includes ICMP "port unreachable", reported on a connected socket.
    Io(std::io::Error),
    Decode(DecodeError),
}

/// Receives datagrams until one A2S reply is whole; `None` at the deadline.
async fn recv_reply(
    socket: &UdpSocket,
    deadline: Instant,
    layout: Option<SplitLayout>,
) -> Result<Option<Vec<u8>>, RecvError> {
    let mut r = Reassembler::new(layout);
    let mut buf = vec![0u8; A2S_BUFFER];
    loop {
        let n = match timeout_at(deadline, socket.recv(&mut buf)).await {
            Err(_) => return Ok(None),
            Ok(Err(e)) => return Err(RecvError::Io(e)),
            Ok(Ok(n)) => n,
        };
        match r.push(buf.get(..n).unwrap_or_default()) {
            Ok(Some(reply)) => return Ok(Some(reply)),
            Ok(None) => {}
            Err(e) => return Err(RecvError::Decode(e)),
        }
    }
}
