//! The admin's webhook API (`docs/protocol.md` §2.4), under
//! `/api/admin/webhooks` (and the status card's preview,
//! `/api/admin/webhooks/preview`): the admin token as `Authorization: Bearer`,
//! checked (and failures counted per address) before a byte of the body
//! is read; bodies of at most 16 KiB read within a time limit; every
//! refusal a small JSON `{"error"}` (an [`HttpError`]) that names the field at
//! fault. Every answer is one of `protocol::webhook`'s types.

use std::sync::Arc;

use axum::{
    extract::{FromRequestParts, State},
    http::{request::Parts, StatusCode},
    response::{IntoResponse, Response},
    routing::{patch, post},
    Router,
};
use protocol::{
    watch::{
        is_webhook_id, CardPreviewRequest, FieldError, WebhookPatch, WebhookSpec, MAX_REQUEST_BYTES,
    },
    webhook::WebhookList,
};

use super::{address, CreateError, Webhooks};
use crate::{
    ctx::Ctx,
    http::{
        error::{HttpError, Path},
        json_api::{answer, no_content, Admin, Body},
    },
};

/// The routes, for the bridge's router.
pub(crate) fn routes() -> Router<Arc<Ctx>> {
    Router::new()
        .route("/api/admin/webhooks", post(create).get(list))
        .route("/api/admin/webhooks/preview", post(preview))
        .route("/api/admin/webhooks/{id}", patch(update).delete(remove))
        .route("/api/admin/webhooks/{id}/test", post(test))
}

/// The webhooks, once the request carries the admin token ([`Admin`])
/// and they are read from the database (503 until then).
struct Hooks(Arc<Webhooks>);

impl FromRequestParts<Arc<Ctx>> for Hooks {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, ctx: &Arc<Ctx>) -> Result<Self, HttpError> {
        Admin::from_request_parts(parts, ctx).await?;
        if !ctx.webhooks.ensure_loaded().await {
            return Err(HttpError::unavailable("webhooks are unavailable", 5));
        }
        Ok(Self(ctx.webhooks.clone()))
    }
}

/// A webhook's id from the path: anything that is not one names no
/// webhook (404).
struct Id(String);

impl<S: Send + Sync> FromRequestParts<S> for Id {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, HttpError> {
        let Path(id) = Path::<String>::from_request_parts(parts, state).await?;
        if is_webhook_id(&id) {
            Ok(Self(id))
        } else {
            Err(no_such_webhook())
        }
    }
}

fn no_such_webhook() -> HttpError {
    HttpError::not_found("no such webhook")
}

/// The answer to a change of webhook `found` (`None`: unknown), once
/// stored (`Err`: the store failed, logged as `what`).
fn stored<T>(
    found: Option<Result<T, String>>,
    what: &str,
    ok: impl FnOnce(T) -> Response,
) -> Response {
    match found {
        None => no_such_webhook().into_response(),
        Some(Ok(v)) => ok(v),
        Some(Err(e)) => store_failed(what, e).into_response(),
    }
}

/// The refusal when the store failed (logged: the operator's to fix).
fn store_failed(what: &str, e: impl std::fmt::Display) -> HttpError {
    tracing::error!(error = %e, "{what} could not be stored");
    HttpError::unavailable(format_args!("{what} could not be stored"), 5)
}

async fn create(
    State(ctx): State<Arc<Ctx>>,
    Hooks(hooks): Hooks,
    Body(body): Body<MAX_REQUEST_BYTES>,
) -> Result<Response, HttpError> {
    let spec = WebhookSpec::parse(&body)?;
    // The protocol checked the URL's shape; what it names is parsed here.
    let url = url::Url::parse(&spec.url).map_err(|_| FieldError {
        field: "url".into(),
        reason: "is not a URL",
    })?;
    let reach = address::Reach::webhooks(ctx.config.webhook_allow_private);
    if let Err(e) = address::check_url(&url, reach).await {
        return Err(HttpError::BadRequest {
            message: format!("url: {e}"),
            field: Some("url".into()),
        });
    }
    match hooks.create(spec, url).await {
        Ok(v) => Ok(answer(StatusCode::CREATED, &v)),
        Err(e @ CreateError::Full) => Err(HttpError::Conflict(e.to_string())),
        Err(e) => Err(store_failed("the webhook", e)),
    }
}

async fn list(Hooks(hooks): Hooks) -> Response {
    answer(
        StatusCode::OK,
        &WebhookList {
            webhooks: hooks.list().await,
        },
    )
}

/// The message a status card of the asked servers would post now: the
/// admin page's preview (nothing is sent).
async fn preview(
    Hooks(hooks): Hooks,
    Body(body): Body<MAX_REQUEST_BYTES>,
) -> Result<Response, HttpError> {
    let asked = CardPreviewRequest::parse(&body)?;
    Ok(answer(StatusCode::OK, &hooks.card(&asked.servers)))
}

async fn update(
    Hooks(hooks): Hooks,
    Id(id): Id,
    Body(body): Body<MAX_REQUEST_BYTES>,
) -> Result<Response, HttpError> {
    let patch = WebhookPatch::parse(&body)?;
    let found = hooks.set_enabled(&id, patch.enabled).await;
    Ok(stored(found, "the change", |v| answer(StatusCode::OK, &v)))
}

async fn remove(Hooks(hooks): Hooks, Id(id): Id) -> Response {
    let found = hooks.delete(&id).await;
    stored(found, "the deletion", |()| no_content())
}

async fn test(Hooks(hooks): Hooks, Id(id): Id) -> Result<Response, HttpError> {
    match hooks.test(&id).await {
        None => Err(no_such_webhook()),
        Some(record) => Ok(answer(StatusCode::OK, &record)),
    }
}
