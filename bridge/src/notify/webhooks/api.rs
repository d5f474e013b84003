//! The admin's webhook API (`docs/protocol.md` §2.4), under
//! `/api/admin/webhooks` (and the status card's preview,
//! `/api/admin/webhooks/preview`): the admin token as `Authorization: Bearer`,
//! checked (and failures counted per address) before a byte of the body
//! is read; bodies of at most 16 KiB read within a time limit; every
//! refusal a small JSON `{"error"}` ([`ApiError`]) that names the field at
//! fault. Every answer is one of `protocol::webhook`'s types.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use axum::{
    body::Body,
    extract::{ConnectInfo, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::{patch, post},
    Router,
};
use protocol::{
    api::ApiError,
    watch::{
        is_webhook_id, CardPreviewRequest, FieldError, WebhookPatch, WebhookSpec, MAX_REQUEST_BYTES,
    },
    webhook::WebhookList,
};
use serde::Serialize;

use super::{address, CreateError, Webhooks};
use crate::{
    ctx::Ctx,
    http::error::{HttpError, Path},
    live::session::Checked,
};

/// How long a request's body may take to arrive.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// The routes, for the bridge's router.
pub(crate) fn routes() -> Router<Arc<Ctx>> {
    Router::new()
        .route("/api/admin/webhooks", post(create).get(list))
        .route("/api/admin/webhooks/preview", post(preview))
        .route("/api/admin/webhooks/{id}", patch(update).delete(remove))
        .route("/api/admin/webhooks/{id}/test", post(test))
}

/// A JSON answer that no cache keeps (the push API's too).
pub(crate) fn answer(status: StatusCode, body: &impl Serialize) -> Response {
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    (status, h, protocol::json::to_string(body)).into_response()
}

/// A refusal: `{"error": message}` (the push API's too).
pub(crate) fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    answer(
        status,
        &ApiError {
            error: message.to_string(),
            field: None,
        },
    )
}

/// A 400 that names the request's field at fault (the push API's too).
pub(crate) fn refused(e: &FieldError) -> Response {
    answer(StatusCode::BAD_REQUEST, &ApiError::from(e))
}

/// Whether the request carries the admin token; the refusal otherwise
/// (401, or 429 while the address has failed too often). The push
/// admin API's too.
pub(crate) fn authorize(
    ctx: &Ctx,
    client: SocketAddr,
    headers: &HeaderMap,
) -> Result<(), Box<Response>> {
    let candidate = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
    let checked = ctx.session.auth.check(
        &ctx.config.admin_token,
        candidate,
        client,
        std::time::Instant::now(),
        &ctx.metrics,
        "admin API",
    );
    match checked {
        Checked::Admin => Ok(()),
        Checked::Wrong => Err(Box::new(HttpError::Unauthorized.into_response())),
        Checked::Limited => Err(Box::new(
            HttpError::TooManyRequests {
                message: "too many wrong tokens from your address".into(),
                retry_after: ctx.config.auth_window.as_secs().max(1),
            }
            .into_response(),
        )),
    }
}

/// The body, at most `max` bytes, within [`BODY_TIMEOUT`] (the push
/// API's too).
pub(crate) async fn read_body(body: Body, max: usize) -> Result<axum::body::Bytes, Box<Response>> {
    match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, max)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(Box::new(HttpError::PayloadTooLarge { max }.into_response())),
        Err(_) => Err(Box::new(HttpError::RequestTimeout.into_response())),
    }
}

/// The webhooks, once the request carries the admin token and (when
/// `id` is given) names a webhook id; else the refusal.
async fn admitted<'a>(
    ctx: &'a Ctx,
    client: SocketAddr,
    headers: &HeaderMap,
    id: Option<&str>,
) -> Result<&'a Arc<Webhooks>, Box<Response>> {
    authorize(ctx, client, headers)?;
    if id.is_some_and(|id| !is_webhook_id(id)) {
        return Err(Box::new(no_such_webhook()));
    }
    let unavailable = || {
        let mut r = error(StatusCode::SERVICE_UNAVAILABLE, "webhooks are unavailable");
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        Box::new(r)
    };
    let hooks = &ctx.webhooks;
    if !hooks.ensure_loaded().await {
        return Err(unavailable());
    }
    Ok(hooks)
}

/// [`admitted`], then the request's body (see [`read_body`]).
async fn admitted_with_body<'a>(
    ctx: &'a Ctx,
    client: SocketAddr,
    req: Request,
    id: Option<&str>,
) -> Result<(&'a Arc<Webhooks>, axum::body::Bytes), Box<Response>> {
    let hooks = admitted(ctx, client, req.headers(), id).await?;
    let body = read_body(req.into_body(), MAX_REQUEST_BYTES).await?;
    Ok((hooks, body))
}

fn no_such_webhook() -> Response {
    error(StatusCode::NOT_FOUND, "no such webhook")
}

/// The answer to a change of webhook `found` (`None`: unknown), once
/// stored (`Err`: the store failed, logged as `what`).
fn stored<T>(
    found: Option<Result<T, String>>,
    what: &str,
    ok: impl FnOnce(T) -> Response,
) -> Response {
    match found {
        None => no_such_webhook(),
        Some(Ok(v)) => ok(v),
        Some(Err(e)) => store_failed(what, e),
    }
}

/// The answer when the store failed (logged: the operator's to fix).
fn store_failed(what: &str, e: impl std::fmt::Display) -> Response {
    tracing::error!(error = %e, "{what} could not be stored");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        format_args!("{what} could not be stored"),
    )
}

async fn create(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let (hooks, body) = match admitted_with_body(&ctx, client, req, None).await {
        Ok(x) => x,
        Err(r) => return *r,
    };
    let spec = match WebhookSpec::parse(&body) {
        Ok(spec) => spec,
        Err(e) => return refused(&e),
    };
    // The protocol checked the URL's shape; what it names is parsed here.
    let Ok(url) = url::Url::parse(&spec.url) else {
        return refused(&FieldError {
            field: "url".into(),
            reason: "is not a URL",
        });
    };
    let reach = address::Reach::webhooks(ctx.config.webhook_allow_private);
    if let Err(e) = address::check_url(&url, reach).await {
        return answer(
            StatusCode::BAD_REQUEST,
            &ApiError {
                error: format!("url: {e}"),
                field: Some("url".into()),
            },
        );
    }
    match hooks.create(spec, url).await {
        Ok(v) => answer(StatusCode::CREATED, &v),
        Err(e @ CreateError::Full) => error(StatusCode::CONFLICT, e),
        Err(e) => store_failed("the webhook", e),
    }
}

async fn list(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    match admitted(&ctx, client, &headers, None).await {
        Ok(hooks) => answer(
            StatusCode::OK,
            &WebhookList {
                webhooks: hooks.list().await,
            },
        ),
        Err(r) => *r,
    }
}

/// The message a status card of the asked servers would post now: the
/// admin page's preview (nothing is sent).
async fn preview(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let (hooks, body) = match admitted_with_body(&ctx, client, req, None).await {
        Ok(x) => x,
        Err(r) => return *r,
    };
    match CardPreviewRequest::parse(&body) {
        Ok(asked) => answer(StatusCode::OK, &hooks.card(&asked.servers)),
        Err(e) => refused(&e),
    }
}

async fn update(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    req: Request,
) -> Response {
    let (hooks, body) = match admitted_with_body(&ctx, client, req, Some(&id)).await {
        Ok(x) => x,
        Err(r) => return *r,
    };
    let patch = match WebhookPatch::parse(&body) {
        Ok(p) => p,
        Err(e) => return refused(&e),
    };
    let found = hooks.set_enabled(&id, patch.enabled).await;
    stored(found, "the change", |v| answer(StatusCode::OK, &v))
}

async fn remove(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let hooks = match admitted(&ctx, client, &headers, Some(&id)).await {
        Ok(h) => h,
        Err(r) => return *r,
    };
    let found = hooks.delete(&id).await;
    stored(found, "the deletion", |()| {
        StatusCode::NO_CONTENT.into_response()
    })
}

async fn test(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let hooks = match admitted(&ctx, client, &headers, Some(&id)).await {
        Ok(h) => h,
        Err(r) => return *r,
    };
    match hooks.test(&id).await {
        None => no_such_webhook(),
        Some(record) => answer(StatusCode::OK, &record),
    }
}
