//! Plain HTTP/1.1 GETs on loopback: the bridge's API and `/metrics`, and
//! Chromium's DevTools endpoint. Bodies come back as they were on the wire
//! (still compressed), which is what the first-load figures measure.

use std::{net::SocketAddr, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::error::{within, Error, Result};

/// A plain HTTP/1.1 GET on loopback (`Connection: close`; the body is
/// read by `Content-Length`, since Chromium's DevTools server keeps the
/// connection open); the body of a 200 answer.
pub async fn http_get(addr: SocketAddr, path: &str) -> Result<String> {
    let answer = http_request(addr, path, &[]).await?;
    Ok(String::from_utf8_lossy(&answer.body).into_owned())
}

/// A 200 answer to [`http_request`]: its header block and its body as it
/// came over the wire (still compressed if it was).
#[derive(Debug)]
pub struct HttpAnswer {
    /// Status line and headers, lower-cased.
    pub head: String,
    /// The body's bytes.
    pub body: Vec<u8>,
}

impl HttpAnswer {
    /// A header's value (`name` lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            l.strip_prefix(name)
                .and_then(|r| r.strip_prefix(':'))
                .map(str::trim)
        })
    }
}

/// A GET with extra request headers (`Accept-Encoding`, say); fails unless
/// the answer is 200.
pub async fn http_request(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
) -> Result<HttpAnswer> {
    within(Duration::from_secs(10), format!("GET {path}"), async {
        let mut conn = TcpStream::connect(addr).await?;
        let extra: String = headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\r\n"))
            .collect();
        conn.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
        let mut raw = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        // (body start, Content-Length) once the head is complete.
        let mut body_at: Option<(usize, Option<usize>)> = None;
        loop {
            if body_at.is_none() {
                if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
                    let len = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok());
                    body_at = Some((end + 4, len));
                }
            }
            if let Some((start, Some(len))) = body_at {
                if raw.len() >= start + len {
                    break;
                }
            }
            let n = conn.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
        }
        let Some((start, len)) = body_at else {
            return Err(Error::Unexpected(format!("GET {path}: no HTTP answer")));
        };
        let head = String::from_utf8_lossy(&raw[..start]).to_ascii_lowercase();
        if !head.starts_with("http/1.1 200") && !head.starts_with("http/1.0 200") {
            return Err(Error::Unexpected(format!(
                "GET {path}: {}",
                head.lines().next().unwrap_or_default()
            )));
        }
        let end = len.map_or(raw.len(), |l| (start + l).min(raw.len()));
        Ok(HttpAnswer {
            head,
            body: raw[start..end].to_vec(),
        })
    })
    .await
}

/// One sample of a Prometheus text exposition (the test kit's reader).
pub use lobby_testkit::metrics::sample as metric;

/// Reads one sample from the bridge's `/metrics` (boxed: the phases'
/// futures stay small).
pub async fn bridge_metric(bridge: SocketAddr, name: &str) -> Result<f64> {
    Box::pin(lobby_testkit::metrics::scrape(bridge, name))
        .await
        .map_err(Error::Unexpected)
}

/// Waits until the bridge's sample `name` satisfies `ok` (the kit's wait,
/// bounded only against a hung run); its value then.
pub async fn until_metric(bridge: SocketAddr, name: &str, ok: impl Fn(f64) -> bool) -> Result<f64> {
    Ok(Box::pin(lobby_testkit::metrics::try_until_metric(bridge, name, ok)).await?)
}
