//! A webhook receiver on loopback: takes each HTTP request the bridge
//! sends, answers `204`, and hands the request (its headers and body) to
//! the test. Requests are read within bounds (head and body at most 64 KiB
//! each, 5 s per request), so a bug in the bridge cannot hang a test.

use crate::HUNG;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
    task::JoinHandle,
};

/// The most a request's head or body may hold.
const MAX_PART: usize = 64 * 1024;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    /// `(name, value)`, names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    /// The value of header `name` (lowercase), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A running receiver; it stops on drop.
pub struct Receiver {
    /// `http://127.0.0.1:PORT/hook`.
    pub url: String,
    /// `127.0.0.1:PORT`: what the admin page titles its webhook with.
    pub host: String,
    got: mpsc::UnboundedReceiver<Received>,
    task: JoinHandle<()>,
}

impl Receiver {
    /// Listens on a free loopback port.
    pub async fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the receiver");
        let addr = listener.local_addr().expect("the receiver's address");
        let (tx, got) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let tx = tx.clone();
                tokio::spawn(async move {
                    if let Ok(Some(r)) = tokio::time::timeout(HUNG, take(stream)).await {
                        let _ = tx.send(r);
                    }
                });
            }
        });
        Receiver {
            url: format!("http://{addr}/hook"),
            host: addr.to_string(),
            got,
            task,
        }
    }

    /// The next request (the test hangs until one comes).
    pub async fn next(&mut self) -> Received {
        crate::bounded("a request at the receiver", self.got.recv())
            .await
            .expect("the receiver stopped")
    }

    /// Whether a request came that was not taken yet.
    pub fn has_more(&mut self) -> bool {
        !self.got.is_empty()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request and answers `204`; `None` for one that is not HTTP.
async fn take(mut stream: TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_PART {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|l| {
            let (n, v) = l.split_once(':')?;
            Some((n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        })
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    if length > MAX_PART {
        return None;
    }
    let mut body = buf[end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    let _ = stream
        .write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .await;
    let _ = stream.shutdown().await;
    Some(Received { headers, body })
}
