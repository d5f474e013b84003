//! The WebSocket upgrade at `/ws`: the checks a request passes before it
//! becomes a session (a valid upgrade, an allowed `Origin`, a slot for its
//! address and one in all), and the socket's settings.

use std::{
    net::SocketAddr,
    sync::{atomic::Ordering::Relaxed, Arc},
};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Extension,
};
use hyper_util::rt::TokioIo;
use master::{
    logtext::{cut, cut_bytes},
    throttled,
};
use tokio_tungstenite::tungstenite::{handshake::derive_accept_key, protocol::WebSocketConfig};
use tracing::debug;

use crate::{
    config::{MAX_WS_MESSAGE, WS_FRAGMENT},
    ctx::Ctx,
    http::{self, origin::origin_header_allowed},
    live::session,
};

/// `GET /ws`: a browser's WebSocket, upgraded once it passes the
/// checks (a valid upgrade, an allowed origin, a free slot for its
/// address and in all), then run as a [`session`].
pub(crate) async fn ws(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(client): Extension<http::limits::Client>,
    mut req: Request,
) -> Response {
    // The upgrade is done here rather than with axum's `WebSocketUpgrade`:
    // its socket hides tungstenite's frames, and large lists must go out
    // fragmented (see `session::outbox`) or every subscriber's write buffer
    // grows to the largest list ever pushed.
    let headers = req.headers();
    let key = match upgrade_key(headers) {
        Ok(key) => key,
        Err(why) => {
            ctx.metrics.refused_not_websocket.fetch_add(1, Relaxed);
            return (StatusCode::BAD_REQUEST, why).into_response();
        }
    };
    let origin = headers.get(header::ORIGIN).map(HeaderValue::as_bytes);
    let host = headers.get(header::HOST).map(HeaderValue::as_bytes);
    if !origin_header_allowed(
        origin,
        host,
        &ctx.config.allowed_origins,
        ctx.config.loopback_origins,
    ) {
        // A client can repeat this as fast as it can send requests: the
        // counter says how many, the log a sample (its origin cut short).
        ctx.metrics.refused_origin.fetch_add(1, Relaxed);
        throttled!(
            info,
            %peer,
            origin = %cut_bytes(origin.unwrap_or_default()),
            "upgrade from a foreign origin refused"
        );
        return (StatusCode::FORBIDDEN, "origin not allowed\n").into_response();
    }
    if ctx.cancel.is_cancelled() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    let Ok(accept) = HeaderValue::from_str(&derive_accept_key(key.as_bytes())) else {
        return (StatusCode::BAD_REQUEST, "bad Sec-WebSocket-Key\n").into_response();
    };
    let Some(address_slot) = client.ws_slot() else {
        ctx.metrics.refused_ws_address.fetch_add(1, Relaxed);
        debug!(%peer, "WebSocket limit of this address reached; upgrade refused");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many connections from your address\n",
        )
            .into_response();
    };
    let Ok(permit) = ctx.slots.clone().try_acquire_owned() else {
        ctx.metrics.refused_full.fetch_add(1, Relaxed);
        throttled!(warn, %peer, "connection limit reached; upgrade refused");
        return (StatusCode::SERVICE_UNAVAILABLE, "too many connections\n").into_response();
    };
    let upgrade = hyper::upgrade::on(&mut req);
    let handle = ctx.session.clone();
    ctx.sessions.spawn(async move {
        match upgrade.await {
            Ok(upgraded) => {
                session::run(handle, peer, TokioIo::new(upgraded), ws_config()).await;
            }
            Err(e) => debug!(%peer, error = %cut(&e), "websocket upgrade failed"),
        }
        drop((permit, address_slot));
    });
    (
        StatusCode::SWITCHING_PROTOCOLS,
        [
            (header::CONNECTION, HeaderValue::from_static("upgrade")),
            (header::UPGRADE, HeaderValue::from_static("websocket")),
            (header::SEC_WEBSOCKET_ACCEPT, accept),
        ],
    )
        .into_response()
}

/// The WebSocket settings of every browser connection.
fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_WS_MESSAGE))
        .max_frame_size(Some(MAX_WS_MESSAGE))
        .read_buffer_size(4096)
        // Messages are written at each flush (once per event a session
        // handles: see `session::outbox`). Large
        // messages leave in fragments of `WS_FRAGMENT`, so the write
        // buffer stays about this size plus one fragment.
        .write_buffer_size(WS_FRAGMENT)
        .max_write_buffer_size(16 << 20)
}

/// The `Sec-WebSocket-Key` of a valid WebSocket upgrade request, or why
/// the request is not one.
fn upgrade_key(headers: &HeaderMap) -> Result<String, &'static str> {
    let has_token = |name: header::HeaderName, token: &str| {
        headers.get_all(name).iter().any(|v| {
            v.to_str()
                .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        })
    };
    if !has_token(header::CONNECTION, "upgrade") {
        return Err("Connection header did not include 'upgrade'\n");
    }
    if !has_token(header::UPGRADE, "websocket") {
        return Err("`Upgrade` header did not include 'websocket'\n");
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|v| v.as_bytes() != b"13")
    {
        return Err("`Sec-WebSocket-Version` header did not include '13'\n");
    }
    match headers
        .get(header::SEC_WEBSOCKET_KEY)
        .and_then(|v| v.to_str().ok())
    {
        Some(key) if !key.trim().is_empty() => Ok(key.trim().to_owned()),
        _ => Err("`Sec-WebSocket-Key` header missing\n"),
    }
}
