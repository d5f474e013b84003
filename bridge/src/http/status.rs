//! What operators and their monitors read: `/healthz` (the master up or
//! down) and `/metrics` (every counter, as Prometheus reads them).

use std::sync::Arc;

use axum::{
    extract::State,
    http::{header, StatusCode},
    response::{IntoResponse, Response},
};
use protocol::bridge::MasterState;

use crate::ctx::Ctx;

/// Up or down, and nothing else: who may ask is anyone, so the master's
/// address and the OS error stay in the log (WARN when the master goes
/// down).
pub(crate) async fn healthz(State(ctx): State<Arc<Ctx>>) -> Response {
    let (status, body) = match ctx.upstream.current().master {
        MasterState::Up => (StatusCode::OK, r#"{"status":"ok","master":"up"}"#),
        MasterState::Down => (
            StatusCode::SERVICE_UNAVAILABLE,
            r#"{"status":"unavailable","master":"down"}"#,
        ),
    };
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// `GET /metrics`: every counter of the bridge, as Prometheus reads them.
pub(crate) async fn metrics(State(ctx): State<Arc<Ctx>>) -> Response {
    let mut text = ctx.metrics.render();
    ctx.history.counters().render(&mut text);
    ctx.events.render(&mut text);
    ctx.notify.render(&mut text);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}
