//! The bridge's own HTTP/1.1 accept loop, in place of `axum::serve`, so
//! that one host cannot use up the process's file descriptors or hold
//! connections forever: a cap on client connections in all and per address
//! (checked right after `accept`, before anything is read), a time limit for
//! a request's head (slowloris), an idle keep-alive timeout, and the client
//! address of each request (see [`crate::http::forwarded`]) for the per-address
//! WebSocket cap and the log lines. This file admits connections;
//! [`super::connection`] serves each one, within the [`super::limits`].

use std::{
    io,
    net::SocketAddr,
    sync::{atomic::Ordering::Relaxed, Arc},
    time::Duration,
};

use axum::Router;
use master::throttled;
use tokio::net::TcpListener;
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::debug;

use super::{
    connection::Held,
    forwarded,
    limits::{ConnSlot, Limits},
};

/// What a refused connection is told before it is closed.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
content-length: 21\r\nconnection: close\r\n\r\ntoo many connections\n";

/// Serves `router` on `listener` until `stop` fires; then stops accepting,
/// lets open requests finish and closes idle connections, and returns once
/// every HTTP connection has ended (upgraded WebSockets are not waited for).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Arc<Limits>,
    stop: CancellationToken,
) {
    let connections = TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of file descriptors or memory: give the open
                // connections a moment to end instead of spinning.
                throttled!(warn, error = %e, "accept failed; retrying in 100 ms");
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(Duration::from_millis(100)) => continue,
                }
            }
        };
        let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
        let Some(slot) = admit(&limits, peer) else {
            // Closed at once, before reading anything, so the descriptor
            // is free again; the 503 is best-effort.
            let _ = tcp.try_write(REFUSAL);
            continue;
        };
        // Nagle off: every WebSocket message is one write, and relayed
        // replies must not wait for the browser's ACK of the previous one.
        let _ = tcp.set_nodelay(true);
        connections.spawn(super::connection::serve(
            Held::new(tcp, slot),
            peer,
            router.clone(),
            limits.clone(),
            stop.clone(),
        ));
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

/// The slots a new connection from `peer` holds for its life, or `None`
/// when its address or the whole bridge is at its cap.
fn admit(limits: &Arc<Limits>, peer: SocketAddr) -> Option<ConnSlot> {
    let metrics = &limits.metrics;
    // A trusted proxy carries many clients: only the total cap applies.
    let address = if forwarded::is_trusted(peer.ip(), &limits.trusted) {
        None
    } else {
        let Some(slot) = limits.http.try_acquire(peer.ip()) else {
            metrics.http_refused_address.fetch_add(1, Relaxed);
            debug!(%peer, "too many connections from this address; closed");
            return None;
        };
        Some(slot)
    };
    let Ok(permit) = limits.total.clone().try_acquire_owned() else {
        metrics.http_refused_full.fetch_add(1, Relaxed);
        debug!(%peer, "HTTP connection limit reached; closed");
        return None;
    };
    metrics.http_connections.fetch_add(1, Relaxed);
    Some(ConnSlot {
        _permit: permit,
        _address: address,
        metrics: metrics.clone(),
    })
}

/// Errors of one connection that `accept` reports; the next one may work.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}
