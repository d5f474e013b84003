//! Plain TCP clients of the master: the baseline the relay is compared
//! with, and the game servers that fill the list.

use std::{net::SocketAddr, time::Duration};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use protocol::{
    codec::{Frame, FrameCodec},
    Command, Registration,
};
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

use crate::error::{within, Error, Result};

/// A framed connection to the master.
pub type Conn = Framed<TcpStream, FrameCodec>;

/// `msQueryGameServers` as the master and the bridge expect it.
pub const QUERY: &str = r#"{"command":"msQueryGameServers"}"#;

/// How every list reply starts (compact JSON, `command` first).
pub const REPLY_PREFIX: &str = r#"{"command":"msRQueryGameServers""#;

/// Connects with Nagle off (every message is one write).
pub async fn connect(addr: SocketAddr) -> Result<Conn> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    // Lists of 10,000 servers are far beyond the master's inbound 64 KiB.
    Ok(Framed::new(stream, FrameCodec::new(64 << 20, 9)))
}

/// Frames and sends one JSON message.
pub async fn send(conn: &mut Conn, json: &str) -> Result<()> {
    conn.send(json.as_bytes()).await?;
    Ok(())
}

/// The next whole message from the master.
pub async fn next_message(conn: &mut Conn) -> Result<Bytes> {
    match conn.next().await {
        Some(Ok(Frame::Message(json))) => Ok(json),
        Some(Ok(Frame::Discarded(reason))) => Err(Error::Unexpected(format!(
            "master sent a bad frame: {reason}"
        ))),
        Some(Err(e)) => Err(e.into()),
        None => Err(Error::Unexpected("the master closed the connection".into())),
    }
}

/// One query round trip; returns the reply's JSON.
pub async fn query(conn: &mut Conn) -> Result<Bytes> {
    send(conn, QUERY).await?;
    let reply = next_message(conn).await?;
    if !reply.starts_with(REPLY_PREFIX.as_bytes()) {
        return Err(Error::Unexpected(
            "master answered a query with something else".into(),
        ));
    }
    Ok(reply)
}

/// `msRegisterGameServer` for a benchmark server.
pub fn register_json(name: &str, port: u16) -> String {
    let reg = Registration::new(name, "192.168.0.10", u64::from(port))
        .unwrap_or_else(|e| panic!("benchmark registration {name:?} is invalid: {e}"));
    Command::Register(reg).to_json()
}

/// `msUpdateGameServerStats` with `current` players (max 4): benchmarks
/// use a unique `current` as the marker of one change.
pub fn stats_json(current: u64) -> String {
    format!(
        r#"{{"command":"msUpdateGameServerStats","content":{{"players":{{"current":{current},"max":4}},"isLobbyOpen":true,"gameplayMode":1}}}}"#
    )
}

/// The text a list carries once a server has `current` players.
pub fn marker(current: u64) -> String {
    format!(r#""current":{current},"#)
}

/// How many servers the master lists now.
pub async fn count_servers(conn: &mut Conn) -> Result<usize> {
    match Command::parse(&query(conn).await?) {
        Ok(Command::QueryReply(list)) => Ok(list.servers.len()),
        _ => Err(Error::Unexpected("unreadable list reply".into())),
    }
}

/// Registers `n` game servers named `{prefix} {i}`, each on its own
/// connection (which must stay open: closing one removes its server), and
/// waits until the master lists `listed_before + n`.
pub async fn register_servers(
    addr: SocketAddr,
    n: usize,
    prefix: &str,
    listed_before: usize,
) -> Result<Vec<Conn>> {
    let mut probe = connect(addr).await?;
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        let mut c = connect(addr).await?;
        let port = 20_000 + (i % 30_000) as u16;
        send(&mut c, &register_json(&format!("{prefix} {i}"), port)).await?;
        conns.push(c);
        // Let the master keep up, as servers arriving over time would.
        if (i + 1) % 1000 == 0 {
            wait_listed(&mut probe, listed_before + i + 1).await?;
        }
    }
    wait_listed(&mut probe, listed_before + n).await?;
    Ok(conns)
}

async fn wait_listed(probe: &mut Conn, want: usize) -> Result<()> {
    within(format!("{want} servers listed"), async {
        loop {
            if count_servers(probe).await? >= want {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}
