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
    extract::{ConnectInfo, FromRequestParts, State},
    http::{header, request::Parts, HeaderMap, HeaderValue, StatusCode},
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

use super::{point_ok, vapid::Vapid, Push, PushRefusal, Put};
use crate::{
    ctx::Ctx,
    db::store::{blocking, StoreError},
    http::{
        answers::etag_of,
        error::{HttpError, Path},
        json_api::{answer, no_content, Admin, Body},
    },
    notify::webhooks::address,
};

/// How long a client is asked to wait after a limit refused it.
const LIMITED_RETRY_AFTER: u64 = 3600;

fn unavailable() -> HttpError {
    HttpError::unavailable("Web Push is unavailable", 5)
}

/// Web Push, once its key and subscriptions are read: while it is off (no
/// contact), 503 saying why, with no `Retry-After` (it stays off until the
/// operator restarts the bridge with one); until it is read, 503 to ask
/// again. Its key comes with it.
pub(crate) struct Ready(Arc<Push>, Arc<Vapid>);

impl FromRequestParts<Arc<Ctx>> for Ready {
    type Rejection = HttpError;

    async fn from_request_parts(_: &mut Parts, ctx: &Arc<Ctx>) -> Result<Self, HttpError> {
        if let Some(why) = ctx.push.off() {
            return Err(HttpError::off(why));
        }
        match ctx.push.ready().await {
            Some(vapid) => Ok(Self(ctx.push.clone(), vapid)),
            None => Err(unavailable()),
        }
    }
}

/// `GET /api/push/key`: `{"publicKey"}`, the VAPID key a page subscribes
/// with (it never changes: its `ETag` lets a page revalidate).
pub(crate) async fn key(Ready(_, vapid): Ready, headers: HeaderMap) -> Response {
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
async fn endpoint_ok(sub: &Subscription, push: &Push) -> Result<Url, HttpError> {
    let refuse = |field: &'static str, reason: &'static str| {
        HttpError::from(FieldError {
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
        let seen = blocking(ctx.history.database(), move |d| {
            d.lock().seen_since(&rest, 0)
        })
        .await?;
        listed.extend(seen.into_iter().map(|k| k as u64));
    }
    Ok(watches.iter().position(|w| !listed.contains(&w.key.0)))
}

/// A 400 naming the field, logged (throttled) with the client's address.
fn refused_field(e: &FieldError, client: IpAddr) -> HttpError {
    throttled!(info, client = %client, field = %master::logtext::cut(&e.field), reason = e.reason, "a push request was refused");
    HttpError::from(e)
}

fn refused(r: PushRefusal, client: IpAddr) -> HttpError {
    let refusal = match r {
        PushRefusal::NotYours => HttpError::Forbidden(r.to_string()),
        PushRefusal::PerAddress | PushRefusal::Full => HttpError::TooManyRequests {
            message: r.to_string(),
            retry_after: LIMITED_RETRY_AFTER,
        },
        PushRefusal::Unknown => HttpError::not_found(&r),
        PushRefusal::Off(ref why) => return HttpError::off(why),
        PushRefusal::Store(ref e) => {
            tracing::error!(error = %e, "a push subscription could not be stored");
            return unavailable();
        }
    };
    throttled!(info, client = %client, status = refusal.status().as_u16(), reason = %r, "a push request was refused");
    refusal
}

/// `PUT /api/push/subscription`: creates (201) or replaces (200) a
/// subscription's watches.
pub(crate) async fn subscribe(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Ready(push, _): Ready,
    Body(body): Body<MAX_PUSH_REQUEST_BYTES>,
) -> Result<Response, HttpError> {
    let request = PushRequest::parse(&body, push.settings().schemes())
        .map_err(|e| refused_field(&e, client.ip()))?;
    match first_unlisted(&ctx, &request.watches).await {
        Ok(None) => {}
        Ok(Some(i)) => {
            return Err(refused_field(
                &FieldError {
                    field: format!("watches[{i}].key").into(),
                    reason: "names no server this lobby has listed",
                },
                client.ip(),
            ))
        }
        Err(_) => return Err(unavailable()),
    }
    let url = endpoint_ok(&request.subscription, &push)
        .await
        .inspect_err(|_| {
            throttled!(info, client = %client.ip(), "a push subscription's endpoint was refused");
        })?;
    let kept = request.answer();
    let status = match push.put(request, url, client.ip()).await {
        Ok(Put::Created) => StatusCode::CREATED,
        Ok(Put::Replaced) => StatusCode::OK,
        Err(r) => return Err(refused(r, client.ip())),
    };
    Ok(answer(status, &to_value(&kept)))
}

/// `DELETE /api/push/subscription`: removes one (204), given its
/// endpoint and auth secret.
pub(crate) async fn unsubscribe(
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Ready(push, _): Ready,
    Body(body): Body<MAX_PUSH_REQUEST_BYTES>,
) -> Result<Response, HttpError> {
    let removal = PushRemoval::parse(&body).map_err(|e| refused_field(&e, client.ip()))?;
    push.remove(&removal.subscription)
        .await
        .map_err(|r| refused(r, client.ip()))?;
    Ok(no_content())
}

/// The admin's routes, for the bridge's router.
pub(crate) fn admin_routes() -> Router<Arc<Ctx>> {
    Router::new()
        .route("/api/admin/push", get(status))
        .route("/api/admin/push/sources/{source}", delete(purge))
}

/// The admin's Web Push, once the request carries the admin token
/// ([`Admin`]) and the subscriptions are read. Off, it still lists and
/// purges what is stored.
struct Admitted(Arc<Push>);

impl FromRequestParts<Arc<Ctx>> for Admitted {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, ctx: &Arc<Ctx>) -> Result<Self, HttpError> {
        Admin::from_request_parts(parts, ctx).await?;
        match ctx.push.ready().await {
            Some(_) => Ok(Self(ctx.push.clone())),
            None => Err(unavailable()),
        }
    }
}

/// `GET /api/admin/push`: whether Web Push runs, and the subscriptions
/// per source.
async fn status(Admitted(push): Admitted) -> Response {
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
    Admitted(push): Admitted,
    Path(source): Path<String>,
) -> Result<Response, HttpError> {
    let ip = source.parse::<IpAddr>().map_err(|_| FieldError {
        field: "source".into(),
        reason: "is not an IP address",
    })?;
    match push.purge(ip).await {
        Ok(0) => Err(HttpError::not_found("no subscription from this source")),
        Ok(n) => {
            tracing::info!(source = %master::limits::address_key(ip), purged = n, "the admin purged a source's push subscriptions");
            Ok(no_content())
        }
        Err(e) => {
            tracing::error!(error = %e, "a source's push subscriptions could not be deleted");
            Err(unavailable())
        }
    }
}
