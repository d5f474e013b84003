//! The push API (`docs/protocol.md` §2.4): `GET /api/push/key` and
//! `PUT`/`DELETE /api/push/subscription`. Every request has paid the
//! client address's `/api/` budget before it gets here
//! ([`crate::http::api::limit`]); bodies of at most 8 KiB are read within a
//! time limit; every refusal is a small JSON `{"error"}` naming the field
//! at fault. A watch must name a key the bridge has listed (now, or in
//! its history); an endpoint is checked where it points (public, or
//! loopback `http` with `--push-allow-insecure`) before anything is
//! stored. Every refusal is logged, throttled. Without a contact for the
//! push services, Web Push is off: every call answers 503 saying why.
//!
//! The admin's side, under `/api/admin/push` with the admin token: the
//! subscriptions' count per source, and purging one source.

use std::{
    collections::HashSet,
    net::{IpAddr, SocketAddr},
    sync::Arc,
};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::Response,
    routing::{delete, get},
    Router,
};
use master::throttled;
use protocol::{
    push::{
        PushKey, PushRemoval, PushRequest, PushSource, PushStatus, PushWatch, Subscription,
        MAX_PUSH_REQUEST_BYTES,
    },
    watch::FieldError,
};
use url::{Host, Url};

use super::{point_ok, Push, PushRefusal, Put};
use crate::{
    ctx::Ctx,
    db::store::StoreError,
    http::{answers::etag_of, error::Path},
    notify::webhooks::{
        address,
        api::{answer, authorize, error, read_body, refused as field_refused},
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

/// Web Push is off (no contact): 503 saying why, with no `Retry-After`
/// (it stays off until the operator restarts the bridge with one).
fn off(why: &str) -> Response {
    error(StatusCode::SERVICE_UNAVAILABLE, why)
}

/// Web Push, once its key and subscriptions are read; else the 503.
async fn ready(ctx: &Ctx) -> Result<&Arc<Push>, Response> {
    let push = &ctx.push;
    if let Some(why) = push.off() {
        return Err(off(why));
    }
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
    let push = &ctx.push;
    if let Some(why) = push.off() {
        return off(why);
    }
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

/// The index of the first watch naming a key the bridge has never
/// listed (not in the list now, no row in its history); `Err`: the
/// history cannot be read.
async fn first_unlisted(ctx: &Ctx, watches: &[PushWatch]) -> Result<Option<usize>, StoreError> {
    let wanted: HashSet<u64> = watches.iter().map(|w| w.key.0).collect();
    if wanted.is_empty() {
        return Ok(None);
    }
    let mut listed: HashSet<u64> = ctx
        .upstream
        .current()
        .feed
        .map(|feed| {
            feed.list()
                .iter()
                .filter_map(|k| k.key)
                .map(|k| k.0)
                .filter(|k| wanted.contains(k))
                .collect()
        })
        .unwrap_or_default();
    let rest: Vec<i64> = wanted
        .iter()
        .filter(|k| !listed.contains(k))
        .map(|&k| k as i64)
        .collect();
    if !rest.is_empty() {
        let history = ctx.history.clone();
        let seen = tokio::task::spawn_blocking(move || history.store().seen_since(&rest, 0))
            .await
            .map_err(|_| StoreError::Unavailable)??;
        listed.extend(seen.into_iter().map(|k| k as u64));
    }
    Ok(watches.iter().position(|w| !listed.contains(&w.key.0)))
}

/// A 400 naming the field, logged (throttled) with the client's address.
fn refused_field(e: &FieldError, client: IpAddr) -> Response {
    throttled!(info, client = %client, field = %master::logtext::cut(&e.field), reason = e.reason, "a push request was refused");
    field_refused(e)
}

fn refused(r: PushRefusal, client: IpAddr) -> Response {
    let status = match r {
        PushRefusal::NotYours => StatusCode::FORBIDDEN,
        PushRefusal::PerAddress | PushRefusal::Full => StatusCode::TOO_MANY_REQUESTS,
        PushRefusal::Unknown => StatusCode::NOT_FOUND,
        PushRefusal::Off(ref why) => return off(why),
        PushRefusal::Store(ref e) => {
            tracing::error!(error = %e, "a push subscription could not be stored");
            return unavailable();
        }
    };
    throttled!(info, client = %client, status = status.as_u16(), reason = %r, "a push request was refused");
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
        Err(e) => return refused_field(&e, client.ip()),
    };
    match first_unlisted(&ctx, &request.watches).await {
        Ok(None) => {}
        Ok(Some(i)) => {
            return refused_field(
                &FieldError {
                    field: format!("watches[{i}].key").into(),
                    reason: "names no server this lobby has listed",
                },
                client.ip(),
            )
        }
        Err(_) => return unavailable(),
    }
    let url = match endpoint_ok(&request.subscription, push).await {
        Ok(url) => url,
        Err(r) => {
            throttled!(info, client = %client.ip(), "a push subscription's endpoint was refused");
            return r;
        }
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
        Err(r) => refused(r, client.ip()),
    }
}

/// `DELETE /api/push/subscription`: removes one (204), given its
/// endpoint and auth secret.
pub(crate) async fn unsubscribe(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let (push, body) = match ready_with_body(&ctx, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let removal = match PushRemoval::parse(&body) {
        Ok(r) => r,
        Err(e) => return refused_field(&e, client.ip()),
    };
    match push.remove(&removal.subscription).await {
        Ok(()) => {
            let mut r = Response::new(axum::body::Body::empty());
            *r.status_mut() = StatusCode::NO_CONTENT;
            r
        }
        Err(r) => refused(r, client.ip()),
    }
}

/// The admin's routes, for the bridge's router.
pub(crate) fn admin_routes() -> Router<Arc<Ctx>> {
    Router::new()
        .route("/api/admin/push", get(status))
        .route("/api/admin/push/sources/{source}", delete(purge))
}

/// The admin's Web Push, once the request carries the admin token.
async fn admitted<'a>(
    ctx: &'a Ctx,
    client: SocketAddr,
    headers: &HeaderMap,
) -> Result<&'a Arc<Push>, Response> {
    authorize(ctx, client, headers).map_err(|r| *r)?;
    let push = &ctx.push;
    // Off, it still lists and purges what is stored.
    if push.ready().await.is_none() {
        return Err(unavailable());
    }
    Ok(push)
}

/// `GET /api/admin/push`: whether Web Push runs, and the subscriptions
/// per source.
async fn status(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    let push = match admitted(&ctx, client, &headers).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let settings = push.settings();
    let body = PushStatus {
        enabled: push.off().is_none(),
        off: push.off().map(str::to_owned),
        contact: settings.contact.clone().ok(),
        subscriptions: push.len() as u64,
        max_subscriptions: settings.max_subscriptions as u64,
        max_per_source: settings.max_per_address as u64,
        expire_after: settings.expire_after.as_secs(),
        sources: push
            .sources()
            .into_iter()
            .map(|(source, subscriptions, oldest)| PushSource {
                source,
                subscriptions: subscriptions as u64,
                oldest,
            })
            .collect(),
    };
    answer(StatusCode::OK, &to_value(&body))
}

/// `DELETE /api/admin/push/sources/{source}`: deletes every subscription
/// made from the source (204), or 404 when it holds none.
async fn purge(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Path(source): Path<String>,
    headers: HeaderMap,
) -> Response {
    let push = match admitted(&ctx, client, &headers).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let Ok(ip) = source.parse::<IpAddr>() else {
        return field_refused(&FieldError {
            field: "source".into(),
            reason: "is not an IP address",
        });
    };
    match push.purge(ip).await {
        Ok(0) => error(StatusCode::NOT_FOUND, "no subscription from this source"),
        Ok(n) => {
            tracing::info!(source = %master::limits::address_key(ip), purged = n, "the admin purged a source's push subscriptions");
            let mut r = Response::new(axum::body::Body::empty());
            *r.status_mut() = StatusCode::NO_CONTENT;
            r
        }
        Err(e) => {
            tracing::error!(error = %e, "a source's push subscriptions could not be deleted");
            unavailable()
        }
    }
}
