//! WebSocket clients of the bridge: viewers and admins, as a browser page
//! would open them.

use std::{
    net::SocketAddr,
    pin::Pin,
    sync::{
        atomic::{AtomicU64, Ordering::Relaxed},
        Arc,
    },
    task::{Context, Poll},
};

use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::TcpStream,
};
use tokio_tungstenite::{
    tungstenite::{self, protocol::WebSocketConfig, Message, Utf8Bytes},
    MaybeTlsStream, WebSocketStream,
};

use lobby_testkit::product::ADMIN_TOKEN;

use crate::{
    direct::{QUERY, REPLY_PREFIX},
    error::{within, Error, Result},
};

/// A client WebSocket to the bridge.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The bridge's WebSocket URL.
pub fn url(bridge: SocketAddr) -> String {
    format!("ws://{bridge}/ws")
}

/// Opens a WebSocket (Nagle off) that reads in 128 KiB chunks, as a
/// browser would: lists arrive in one read.
pub async fn connect(url: &str) -> Result<Ws> {
    connect_with(url, 128 * 1024).await
}

/// Opens a WebSocket with a small read buffer: thousands of idle ones live
/// in one process.
pub async fn connect_small(url: &str) -> Result<Ws> {
    connect_with(url, 4096).await
}

async fn connect_with(url: &str, read_buffer: usize) -> Result<Ws> {
    let config = WebSocketConfig::default()
        .read_buffer_size(read_buffer)
        .max_message_size(Some(64 << 20));
    let (ws, _) = within("WebSocket handshake", async {
        Ok(tokio_tungstenite::connect_async_with_config(url, Some(config), true).await?)
    })
    .await?;
    Ok(ws)
}

/// Sends one text message, on a whole socket or its sending half.
pub async fn send<S>(ws: &mut S, text: &str) -> Result<()>
where
    S: Sink<Message, Error = tungstenite::Error> + Unpin,
{
    ws.send(Message::text(text)).await?;
    Ok(())
}

/// The next text message (pings are answered by tungstenite itself), on a
/// [`Ws`] or a [`CountedWs`].
pub async fn next_text<S>(ws: &mut S) -> Result<Utf8Bytes>
where
    S: Stream<Item = std::result::Result<Message, tungstenite::Error>> + Unpin,
{
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => return Ok(t),
            Some(Ok(Message::Close(frame))) => {
                return Err(Error::Unexpected(format!(
                    "bridge closed the socket: {frame:?}"
                )))
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(e.into()),
            None => return Err(Error::Unexpected("bridge closed the socket".into())),
        }
    }
}

/// One query through the bridge; returns the reply's length.
pub async fn query(ws: &mut Ws) -> Result<usize> {
    send(ws, QUERY).await?;
    let reply = next_text(ws).await?;
    if !reply.as_str().starts_with(REPLY_PREFIX) {
        return Err(Error::Unexpected(format!(
            "bridge answered a query with {:.120}",
            reply.as_str()
        )));
    }
    Ok(reply.len())
}

/// An authenticated admin WebSocket.
pub async fn admin(url: &str) -> Result<Ws> {
    let mut ws = connect(url).await?;
    send(
        &mut ws,
        &format!(r#"{{"command":"bridgeAuth","content":{{"token":"{ADMIN_TOKEN}"}}}}"#),
    )
    .await?;
    let answer = next_text(&mut ws).await?;
    if !answer.as_str().contains(r#""ok":true"#) {
        return Err(Error::Unexpected(format!("bridgeAuth refused: {answer}")));
    }
    Ok(ws)
}

/// An admin whose queries are relayed on its own master connection: the
/// bridge opens that connection on the first admin command, here an
/// unregister that changes nothing.
pub async fn admin_with_link(url: &str) -> Result<Ws> {
    let mut ws = admin(url).await?;
    send(&mut ws, r#"{"command":"msUnregisterGameServer"}"#).await?;
    query(&mut ws).await?;
    Ok(ws)
}

/// A TCP stream that adds every byte it reads to a shared counter: what the
/// bridge sent on it, WebSocket framing and pings included.
#[derive(Debug)]
pub struct Counted {
    inner: TcpStream,
    read: Arc<AtomicU64>,
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before);
        self.read.fetch_add(n as u64, Relaxed);
        polled
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A WebSocket whose received bytes are counted.
pub type CountedWs = WebSocketStream<Counted>;

/// Opens a WebSocket to `bridge` (Nagle off, small read buffer: thousands
/// live in one process) that adds the bytes it receives to `read`.
pub async fn connect_counted(bridge: SocketAddr, read: Arc<AtomicU64>) -> Result<CountedWs> {
    let config = WebSocketConfig::default()
        .read_buffer_size(4096)
        .max_message_size(Some(64 << 20));
    within("WebSocket handshake", async {
        let tcp = TcpStream::connect(bridge).await?;
        tcp.set_nodelay(true)?;
        let stream = Counted { inner: tcp, read };
        let (ws, _) =
            tokio_tungstenite::client_async_with_config(url(bridge), stream, Some(config)).await?;
        Ok(ws)
    })
    .await
}

/// Opens a WebSocket to `bridge` from the loopback address `source` (the
/// socket is bound to it before connecting), so that a crowd larger than
/// one address's ephemeral ports can be spread over 127.0.0.0/8. Small
/// read buffer, Nagle off.
pub async fn connect_from(bridge: SocketAddr, source: std::net::Ipv4Addr) -> Result<Ws> {
    let config = WebSocketConfig::default()
        .read_buffer_size(4096)
        .max_message_size(Some(64 << 20));
    within("WebSocket handshake", async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::from((source, 0)))?;
        let tcp = socket.connect(bridge).await?;
        tcp.set_nodelay(true)?;
        let (ws, _) = tokio_tungstenite::client_async_with_config(
            url(bridge),
            MaybeTlsStream::Plain(tcp),
            Some(config),
        )
        .await?;
        Ok(ws)
    })
    .await
}
