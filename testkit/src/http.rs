//! Plain HTTP/1.1 on loopback, as tests and benchmarks speak to the
//! product: one request, its answer's status, head and body as they came
//! over the wire (still compressed, if they were). Reads until the body
//! named by `Content-Length` is complete or the server closes (Chromium's
//! DevTools server keeps the connection open).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpSocket, TcpStream},
};

/// An answer: its status, its status line and headers, its body.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    /// The status line and headers as received.
    pub head: String,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A header's value, its name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// Whether the status line or a header contains `needle` (lower
    /// case), whatever the case the server wrote it in.
    pub fn head_contains(&self, needle: &str) -> bool {
        self.head.to_ascii_lowercase().contains(needle)
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// A GET of `path` from 127.0.0.1 with more header lines (`extra`, each
/// ending in `\r\n`).
pub async fn get(addr: SocketAddr, path: &str, extra: &str) -> Result<Answer, String> {
    request(
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        addr,
        "GET",
        path,
        extra,
        b"",
    )
    .await
}

/// [`get`] that fails unless the answer is 200, naming its status line:
/// for a caller that only wants the body (a benchmark's phase, a scrape).
pub async fn get_ok(addr: SocketAddr, path: &str, extra: &str) -> Result<Answer, String> {
    let answer = get(addr, path, extra).await?;
    if answer.status == 200 {
        Ok(answer)
    } else {
        Err(format!(
            "GET {path}: {}",
            answer.head.lines().next().unwrap_or_default()
        ))
    }
}

/// A TCP connection to `to` from the loopback address `from` (127.0.0.2
/// and the rest of 127.0.0.0/8 route to lo on Linux): another host, for
/// the rules that count per address. A connect still pending after
/// [`crate::HUNG`] is an error (`TimedOut`).
pub async fn connect_from(from: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = match from {
        IpAddr::V4(_) => TcpSocket::new_v4()?,
        IpAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.bind(SocketAddr::new(from, 0))?;
    crate::try_bounded(&format!("a connection to {to}"), socket.connect(to))
        .await
        .map_err(|hung| std::io::Error::new(std::io::ErrorKind::TimedOut, hung))?
}

/// One request from the address `from` with `body` (sent as it is, with
/// its length); `Connection: close`, `Accept-Encoding: identity` unless
/// `extra` names an encoding. An answer not complete within
/// [`crate::HUNG`] is an error, not a panic, so a benchmark's phase can
/// report it.
pub async fn request(
    from: IpAddr,
    addr: SocketAddr,
    method: &str,
    path: &str,
    extra: &str,
    body: &[u8],
) -> Result<Answer, String> {
    let what = format!("{method} {path}");
    // Boxed, its buffer on the heap: a test's future holds many of these.
    let answer = Box::pin(crate::try_bounded(&what, async {
        let mut s = connect_from(from, addr)
            .await
            .map_err(|e| format!("{what}: {e}"))?;
        let encoding = if extra.to_ascii_lowercase().contains("accept-encoding:") {
            ""
        } else {
            "Accept-Encoding: identity\r\n"
        };
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{encoding}Content-Length: {}\r\n{extra}\r\n",
            body.len()
        );
        s.write_all(&[head.as_bytes(), body].concat())
            .await
            .map_err(|e| format!("{what}: {e}"))?;
        let mut raw = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            if let Some(len) = complete_length(&raw) {
                raw.truncate(len);
                break;
            }
            match s.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
                // A server that resets after its answer: keep what came.
                Err(_) if raw.windows(4).any(|w| w == b"\r\n\r\n") => break,
                Err(e) => return Err(format!("{what}: {e} after {} bytes", raw.len())),
            }
        }
        parse(&raw).ok_or_else(|| format!("{what}: no HTTP answer in {} bytes", raw.len()))
    }));
    answer.await.map_err(|hung| hung.to_string())?
}

/// The answer in `raw`, once its head is complete.
pub(crate) fn parse(raw: &[u8]) -> Option<Answer> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some(Answer {
        status,
        head,
        body: raw[end + 4..].to_vec(),
    })
}

/// The total length of an answer in `raw` whose head is complete and
/// names a Content-Length that has fully arrived.
pub(crate) fn complete_length(raw: &[u8]) -> Option<usize> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))?
        .trim()
        .parse()
        .ok()?;
    (raw.len() >= end + len).then_some(end + len)
}
