//! The one fake master of the tests: a TCP port on loopback that answers
//! each `msQueryGameServers` as the test's script says, for the bridge's
//! side of the master protocol (a list, garbage, an oversized frame, half
//! a reply and a close, or a reply held until the test lets it go).
//!
//! The script is a function of [`Asked`]: which connection (in the order
//! they were accepted) and which of its queries. It counts what it
//! accepted and answered, so a test waits on those instead of sleeping.
//! Stops on drop.

use std::{
    net::{IpAddr, SocketAddr},
    sync::{
        atomic::{AtomicUsize, Ordering::Relaxed},
        Arc,
    },
};

use serde_json::{json, Value};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::{TcpListener, TcpStream},
    sync::Semaphore,
    task::JoinHandle,
};

use crate::wait::until_true;

/// One query, as the script sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    /// The connection's number, from 0, in the order they were accepted
    /// (a bridge's poller connects first).
    pub connection: usize,
    /// The query's number on that connection, from 0.
    pub query: usize,
}

/// What the fake does with one query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Writes these bytes.
    Write(Vec<u8>),
    /// Writes these bytes, then closes the connection.
    WriteAndClose(Vec<u8>),
    /// Writes nothing until the test calls [`FakeMaster::release`], then
    /// these bytes ([`FakeMaster::until_held`] waits for it).
    Hold(Vec<u8>),
}

/// A message framed as the master protocol frames it: its length in
/// bytes (the newline included), the JSON, a newline.
pub fn frame(message: &Value) -> Vec<u8> {
    let json = message.to_string();
    format!("{}{json}\n", json.len() + 1).into_bytes()
}

/// A listed server as a master's reply carries it (a documentation
/// address, 4 slots, the lobby open, mode 1).
pub fn listed(name: &str, port: u16, current: u32) -> Value {
    json!({
        "name": name,
        "address": "192.0.2.1",
        "port": port,
        "players": {"current": current, "max": 4},
        "isLobbyOpen": true,
        "gameplayMode": 1
    })
}

/// The master's answer to a query, listing `servers`.
pub fn list_reply(servers: &[Value]) -> Value {
    json!({"command": "msRQueryGameServers", "content": {"servers": servers}})
}

/// Frames that are not JSON, or not the answer.
pub fn garbage() -> Vec<u8> {
    [
        &b"7garbage\n"[..],
        b"\x00\xff\xfe binary \n",
        b"12{not json!\n",
        &frame(&json!({"command": "msSomethingElse"})),
        &frame(&json!([1, 2, 3])),
    ]
    .concat()
}

/// A length prefix far over any limit, then 64 KiB of padding.
pub fn oversized() -> Vec<u8> {
    let mut r = b"99999999{\"command\":\"msRQueryGameServers\",".to_vec();
    r.extend(std::iter::repeat_n(b' ', 64 * 1024));
    r
}

/// What the fake counts, shared with its tasks.
#[derive(Default)]
struct Counts {
    accepted: AtomicUsize,
    answered: AtomicUsize,
    held: AtomicUsize,
}

/// The running fake master; see the module's documentation.
pub struct FakeMaster {
    /// Where the bridge connects (`--master`).
    pub addr: SocketAddr,
    counts: Arc<Counts>,
    gate: Arc<Semaphore>,
    task: JoinHandle<()>,
}

impl FakeMaster {
    /// Binds `host`, port 0, and answers every query by `script`.
    pub async fn start(
        host: IpAddr,
        script: impl Fn(Asked) -> Answer + Send + Sync + 'static,
    ) -> FakeMaster {
        let listener = TcpListener::bind((host, 0))
            .await
            .expect("fake master: bind");
        let addr = listener.local_addr().expect("fake master: address");
        let counts = Arc::new(Counts::default());
        let gate = Arc::new(Semaphore::new(0));
        let script = Arc::new(script);
        let (c, g) = (counts.clone(), gate.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let connection = c.accepted.fetch_add(1, Relaxed);
                tokio::spawn(serve(
                    stream,
                    connection,
                    script.clone(),
                    c.clone(),
                    g.clone(),
                ));
            }
        });
        FakeMaster {
            addr,
            counts,
            gate,
            task,
        }
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.counts.accepted.load(Relaxed)
    }

    /// Queries answered so far (a held one once it is let go).
    pub fn answered(&self) -> usize {
        self.counts.answered.load(Relaxed)
    }

    /// Waits until `n` queries in all have come to an [`Answer::Hold`].
    pub async fn until_held(&self, n: usize) {
        until_true("the fake master to hold a query", || {
            self.counts.held.load(Relaxed) >= n
        })
        .await;
    }

    /// Waits until `n` queries in all have been answered.
    pub async fn until_answered(&self, n: usize) {
        until_true("the fake master to answer", || self.answered() >= n).await;
    }

    /// Lets one held query's answer go.
    pub fn release(&self) {
        self.gate.add_permits(1);
    }
}

impl Drop for FakeMaster {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One connection: each line that is a query gets the script's answer.
/// A frame ends in a newline and its JSON holds none, so a line is a frame.
async fn serve<S: Fn(Asked) -> Answer>(
    stream: TcpStream,
    connection: usize,
    script: Arc<S>,
    counts: Arc<Counts>,
    gate: Arc<Semaphore>,
) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let mut query = 0;
    while let Ok(Some(line)) = lines.next_line().await {
        if !line.contains("\"msQueryGameServers\"") {
            continue;
        }
        let answer = script(Asked { connection, query });
        query += 1;
        let (bytes, close) = match answer {
            Answer::Write(bytes) => (bytes, false),
            Answer::WriteAndClose(bytes) => (bytes, true),
            Answer::Hold(bytes) => {
                counts.held.fetch_add(1, Relaxed);
                match gate.acquire().await {
                    Ok(permit) => permit.forget(),
                    Err(_) => return,
                }
                (bytes, false)
            }
        };
        if write.write_all(&bytes).await.is_err() {
            return;
        }
        counts.answered.fetch_add(1, Relaxed);
        if close {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_count_bytes_and_the_newline() {
        // The protocol's own example: 16 bytes of JSON + 1.
        assert_eq!(
            frame(&json!({"Hallo": "Welt"})),
            b"17{\"Hallo\":\"Welt\"}\n"
        );
        // `ä` is two bytes.
        assert_eq!(
            frame(&json!({"universität": "TU Chemnitz"})),
            "31{\"universität\":\"TU Chemnitz\"}\n".as_bytes()
        );
    }
}
