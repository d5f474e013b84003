//! What the JSON APIs that change state share (the admin's webhooks and
//! Web Push, a player's push subscription): the admin token, checked and
//! its failures counted per address before a byte of the body is read
//! ([`Admin`]), a body read within its bound and time ([`Body`]), and
//! answers no cache keeps ([`answer`]). Their refusals are
//! [`HttpError`]s, like every other refusal under `/api/`.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use axum::{
    body::Bytes,
    extract::{ConnectInfo, FromRequest, FromRequestParts, Request},
    http::{header, request::Parts, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use serde::Serialize;

use crate::{ctx::Ctx, http::error::HttpError, live::session::Checked};

/// How long a request's body may take to arrive.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// A JSON answer that no cache keeps.
pub(crate) fn answer(status: StatusCode, body: &impl Serialize) -> Response {
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    (status, h, protocol::json::to_string(body)).into_response()
}

/// An empty answer (204).
pub(crate) fn no_content() -> Response {
    StatusCode::NO_CONTENT.into_response()
}

/// The request carries the admin token as `Authorization: Bearer`; else
/// 401, or 429 while its address has failed too often.
#[derive(Debug)]
pub(crate) struct Admin;

impl FromRequestParts<Arc<Ctx>> for Admin {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, ctx: &Arc<Ctx>) -> Result<Self, HttpError> {
        // Every connection is given its address (`http::connection`).
        let Some(ConnectInfo(client)) = parts.extensions.get::<ConnectInfo<SocketAddr>>() else {
            return Err(HttpError::Internal);
        };
        let candidate = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        let checked = ctx.session.auth.check(
            &ctx.config.admin_token,
            candidate,
            *client,
            std::time::Instant::now(),
            &ctx.metrics,
            "admin API",
        );
        match checked {
            Checked::Admin => Ok(Admin),
            Checked::Wrong => Err(HttpError::Unauthorized),
            Checked::Limited => Err(HttpError::TooManyRequests {
                message: "too many wrong tokens from your address".into(),
                retry_after: ctx.config.auth_window.as_secs().max(1),
            }),
        }
    }
}

/// The request's body, at most `MAX` bytes (413 beyond), sent within
/// [`BODY_TIMEOUT`] (408 after).
#[derive(Debug)]
pub(crate) struct Body<const MAX: usize>(pub(crate) Bytes);

impl<const MAX: usize, S: Send + Sync> FromRequest<S> for Body<MAX> {
    type Rejection = HttpError;

    async fn from_request(req: Request, _: &S) -> Result<Self, HttpError> {
        match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(req.into_body(), MAX)).await {
            Ok(Ok(bytes)) => Ok(Self(bytes)),
            Ok(Err(_)) => Err(HttpError::PayloadTooLarge { max: MAX }),
            Err(_) => Err(HttpError::RequestTimeout),
        }
    }
}
