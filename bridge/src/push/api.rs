//! The push API (`docs/protocol.md` §2.4): `GET /api/push/key` and
//! `PUT`/`DELETE /api/push/subscription`. Every request has paid the
//! client address's `/api/` budget before it gets here
//! ([`crate::api::limit`]); bodies of at most 8 KiB are read within a
//! time limit; every refusal is a small JSON `{"error"}` naming the field
//! at fault. An endpoint is checked where it points (public, or loopback
//! `http` with `--push-allow-insecure`) before anything is stored.

use std::{net::SocketAddr, sync::Arc};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::Response,
};
use protocol::{
    push::{PushKey, PushRemoval, PushRequest, Subscription, MAX_PUSH_REQUEST_BYTES},
    watch::FieldError,
};
use url::{Host, Url};

use super::{point_ok, Push, Put, Refusal};
use crate::{
    ctx::Ctx,
    history_api::etag_of,
    webhooks::{
        address,
        api::{answer, error, read_body, refused as field_refused},
    },
};

/// How long a client is asked to wait after a limit refused it.
const LIMITED_RETRY_AFTER: &str = "3600";

fn unavailable() -> Response {
    let mut r = error(StatusCode::SERVICE_UNAVAILABLE, "Web Push is unavailable");
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    r
}

/// Web Push, once its key and subscriptions are read; else the 503.
async fn ready(ctx: &Ctx) -> Result<&Arc<Push>, Response> {
    let push = ctx.push.as_ref().ok_or_else(unavailable)?;
    match push.ready().await {
        Some(_) => Ok(push),
        None => Err(unavailable()),
    }
}

/// [`ready`], then the request's body (at most
/// [`MAX_PUSH_REQUEST_BYTES`], within the body's time limit).
async fn ready_with_body(
    ctx: &Ctx,
    req: Request,
) -> Result<(&Arc<Push>, axum::body::Bytes), Response> {
    let push = ready(ctx).await?;
    let body = read_body(req.into_body(), MAX_PUSH_REQUEST_BYTES)
        .await
        .map_err(|r| *r)?;
    Ok((push, body))
}

/// `GET /api/push/key`: `{"publicKey"}`, the VAPID key a page subscribes
/// with (it never changes: its `ETag` lets a page revalidate).
pub(crate) async fn key(State(ctx): State<Arc<Ctx>>, headers: HeaderMap) -> Response {
    let Some(push) = ctx.push.as_ref() else {
        return unavailable();
    };
    let Some(vapid) = push.ready().await else {
        return unavailable();
    };
    let body = PushKey {
        public_key: vapid.public_key().to_owned(),
    };
    let etag = etag_of(protocol::json::to_vec(&body).as_slice());
    let mut response = if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes())
    {
        let mut r = Response::new(axum::body::Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        answer(StatusCode::OK, &to_value(&body))
    };
    let h = response.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    response
}

fn to_value(v: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or_default()
}

/// Whether the endpoint may be sent to: `http` only to a loopback
/// address named as such (with `--push-allow-insecure`, which
/// [`protocol::push::Schemes`] already required), and the host public
/// (or loopback with that flag) where it resolves now.
async fn endpoint_ok(sub: &Subscription, push: &Push) -> Result<Url, Response> {
    let refuse = |field: &'static str, reason: &'static str| {
        field_refused(&FieldError {
            field: field.into(),
            reason,
        })
    };
    const ENDPOINT: &str = "subscription.endpoint";
    // The protocol checked the endpoint's shape; what it names is parsed
    // here.
    let Ok(url) = Url::parse(&sub.endpoint) else {
        return Err(refuse(ENDPOINT, "is not a URL"));
    };
    if url.scheme() == "http" {
        let loopback = match url.host() {
            Some(Host::Ipv4(ip)) => ip.is_loopback(),
            Some(Host::Ipv6(ip)) => ip.is_loopback(),
            Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        if !loopback {
            return Err(refuse(ENDPOINT, "must be https (http only on loopback)"));
        }
    }
    match address::check_url(&url, push.settings().reach()).await {
        Ok(()) => {}
        Err(address::ResolveError::NotFound) => {
            return Err(refuse(ENDPOINT, "the host does not resolve"))
        }
        Err(address::ResolveError::Refused) => {
            return Err(refuse(
                ENDPOINT,
                "the host is, or resolves to, an address that is not public",
            ))
        }
    }
    if !point_ok(sub) {
        return Err(refuse(
            "subscription.keys.p256dh",
            "is not a point on P-256",
        ));
    }
    Ok(url)
}

fn refused(r: Refusal) -> Response {
    let status = match r {
        Refusal::NotYours => StatusCode::FORBIDDEN,
        Refusal::PerAddress | Refusal::Full => StatusCode::TOO_MANY_REQUESTS,
        Refusal::Unknown => StatusCode::NOT_FOUND,
        Refusal::Store(ref e) => {
            tracing::error!(error = %e, "a push subscription could not be stored");
            return unavailable();
        }
    };
    let mut response = error(status, r);
    if status == StatusCode::TOO_MANY_REQUESTS {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from_static(LIMITED_RETRY_AFTER),
        );
    }
    response
}

/// `PUT /api/push/subscription`: creates (201) or replaces (200) a
/// subscription's watches.
pub(crate) async fn subscribe(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let (push, body) = match ready_with_body(&ctx, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let request = match PushRequest::parse(&body, push.settings().schemes()) {
        Ok(r) => r,
        Err(e) => return field_refused(&e),
    };
    let url = match endpoint_ok(&request.subscription, push).await {
        Ok(url) => url,
        Err(r) => return r,
    };
    let kept = request.answer();
    match push.put(request, url, client.ip()).await {
        Ok(put) => {
            let status = match put {
                Put::Created => StatusCode::CREATED,
                Put::Replaced => StatusCode::OK,
            };
            answer(status, &to_value(&kept))
        }
        Err(r) => refused(r),
    }
}

/// `DELETE /api/push/subscription`: removes one (204), given its
/// endpoint and auth secret.
pub(crate) async fn unsubscribe(State(ctx): State<Arc<Ctx>>, req: Request) -> Response {
    let (push, body) = match ready_with_body(&ctx, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let removal = match PushRemoval::parse(&body) {
        Ok(r) => r,
        Err(e) => return field_refused(&e),
    };
    match push.remove(&removal.subscription).await {
        Ok(()) => {
            let mut r = Response::new(axum::body::Body::empty());
            *r.status_mut() = StatusCode::NO_CONTENT;
            r
        }
        Err(r) => refused(r),
    }
}
