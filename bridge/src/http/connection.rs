//! One client connection, after the accept loop admitted it: HTTP/1.1
//! served by hyper with the request-head and idle timeouts, each request
//! tagged with its client address, and the socket that keeps the
//! connection's slots until it closes, whether it stays HTTP or becomes a
//! WebSocket.

use std::{
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{Arc, Mutex, PoisonError},
    task::{Context, Poll},
    time::{Duration, Instant},
};

use axum::{extract::ConnectInfo, Router};
use hyper::{body::Incoming, server::conn::http1, Request};
use hyper_util::rt::{TokioIo, TokioTimer};
use master::logtext::cut;
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::TcpStream,
};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;
use tracing::debug;

use super::limits::{Client, ConnSlot, Limits};
use crate::http::forwarded;

/// Largest request head (and write queue) hyper buffers per connection.
const MAX_HTTP_BUFFER: usize = 64 * 1024;

/// Serves one HTTP/1.1 connection until it ends or is upgraded.
pub(super) async fn serve(
    io: Held,
    peer: SocketAddr,
    router: Router,
    limits: Arc<Limits>,
    stop: CancellationToken,
) {
    let activity = Arc::new(Activity::new());
    let trusted = forwarded::is_trusted(peer.ip(), &limits.trusted);
    let service = {
        let activity = activity.clone();
        let limits = limits.clone();
        hyper::service::service_fn(move |mut req: Request<Incoming>| {
            let addr = if trusted {
                forwarded::client_addr(req.headers(), peer, &limits.trusted, limits.header)
            } else {
                peer
            };
            req.extensions_mut().insert(ConnectInfo(addr));
            req.extensions_mut().insert(Client {
                addr,
                ws: limits.ws.clone(),
            });
            let busy = activity.begin();
            let router = router.clone();
            async move {
                let response = router.oneshot(req).await;
                drop(busy);
                response
            }
        })
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true)
        .max_buf_size(MAX_HTTP_BUFFER);
    let conn = builder
        .serve_connection(TokioIo::new(io), service)
        .with_upgrades();
    tokio::pin!(conn);
    let mut closing = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    debug!(%peer, error = %cut(&e), "HTTP connection ended with an error");
                }
                return;
            }
            () = stop.cancelled(), if !closing => {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
            () = activity.idle(limits.idle_timeout), if !closing => {
                debug!(%peer, "idle HTTP connection closed");
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
        }
    }
}

/// A client socket with its slots: they are given back when the socket
/// closes, whether it stayed HTTP or became a WebSocket.
#[derive(Debug)]
pub(super) struct Held {
    io: TcpStream,
    _slot: ConnSlot,
}

impl Held {
    pub(super) fn new(io: TcpStream, slot: ConnSlot) -> Self {
        Self { io, _slot: slot }
    }
}

impl AsyncRead for Held {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Held {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// Requests being answered on one connection, and since when it has had none.
#[derive(Debug)]
struct Activity {
    state: Mutex<(usize, Instant)>,
}

impl Activity {
    fn new() -> Self {
        Self {
            state: Mutex::new((0, Instant::now())),
        }
    }

    fn begin(self: &Arc<Self>) -> Busy {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).0 += 1;
        Busy(self.clone())
    }

    /// Resolves once no request has been in progress for `timeout`.
    async fn idle(&self, timeout: Duration) {
        loop {
            let (busy, since) = *self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let idle_for = since.elapsed();
            if busy == 0 && idle_for >= timeout {
                return;
            }
            let wait = if busy == 0 {
                timeout - idle_for
            } else {
                timeout
            };
            tokio::time::sleep(wait).await;
        }
    }
}

/// A request in progress; its end restarts the idle clock.
struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 = state.0.saturating_sub(1);
        state.1 = Instant::now();
    }
}
