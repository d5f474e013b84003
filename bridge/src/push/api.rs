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
    http::{header, HeaderValue, StatusCode},
    response::Response,
};
use protocol::push::{PushRemoval, PushRequest, Subscription, MAX_PUSH_REQUEST_BYTES};
use serde_json::json;
use url::{Host, Url};

use super::{point_ok, Push, Put, Refusal};
use crate::{
    ctx::Ctx,
    webhooks::{
        address,
        api::{answer, error, read_body},
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

/// `GET /api/push/key`: `{"publicKey"}`, the VAPID key a page subscribes
/// with.
pub(crate) async fn key(State(ctx): State<Arc<Ctx>>) -> Response {
    let Some(push) = ctx.push.as_ref() else {
        return unavailable();
    };
    match push.ready().await {
        Some(vapid) => answer(StatusCode::OK, &json!({ "publicKey": vapid.public_key() })),
        None => unavailable(),
    }
}

/// Whether the endpoint may be sent to: `http` only to a loopback
/// address named as such (with `--push-allow-insecure`, which
/// [`protocol::push::Schemes`] already required), and the host public
/// (or loopback with that flag) where it resolves now.
async fn endpoint_ok(sub: &Subscription, push: &Push) -> Result<Url, Response> {
    let refuse = |why: &str| {
        error(
            StatusCode::BAD_REQUEST,
            format_args!("subscription.endpoint: {why}"),
        )
    };
    // The protocol checked the endpoint's shape; what it names is parsed
    // here.
    let Ok(url) = Url::parse(&sub.endpoint) else {
        return Err(refuse("is not a URL"));
    };
    if url.scheme() == "http" {
        let loopback = match url.host() {
            Some(Host::Ipv4(ip)) => ip.is_loopback(),
            Some(Host::Ipv6(ip)) => ip.is_loopback(),
            Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        if !loopback {
            return Err(refuse("must be https (http only on loopback)"));
        }
    }
    if let Err(e) = address::check_url(&url, push.settings().reach()).await {
        return Err(refuse(&e.to_string()));
    }
    if !point_ok(sub) {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "subscription.keys.p256dh: is not a point on P-256",
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
    let push = match ready(&ctx).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let body = match read_body(req.into_body(), MAX_PUSH_REQUEST_BYTES).await {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let request = match PushRequest::parse(&body, push.settings().schemes()) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let url = match endpoint_ok(&request.subscription, push).await {
        Ok(url) => url,
        Err(r) => return r,
    };
    let watches = PushRequest::watches_json(&request.watches);
    match push.put(request, url, client.ip()).await {
        Ok(put) => {
            let status = match put {
                Put::Created => StatusCode::CREATED,
                Put::Replaced => StatusCode::OK,
            };
            answer(status, &json!({ "watches": watches }))
        }
        Err(r) => refused(r),
    }
}

/// `DELETE /api/push/subscription`: removes one (204), given its
/// endpoint and auth secret.
pub(crate) async fn unsubscribe(State(ctx): State<Arc<Ctx>>, req: Request) -> Response {
    let push = match ready(&ctx).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let body = match read_body(req.into_body(), MAX_PUSH_REQUEST_BYTES).await {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let removal = match PushRemoval::parse(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
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
