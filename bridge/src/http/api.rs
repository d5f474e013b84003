//! `GET /api/servers`: the lobby list as one JSON document for pages and
//! bots that only read (`docs/protocol.md` §4.1). The body is encoded and
//! compressed once per list, revalidated by `ETag`, and readable from any
//! origin. Every answer under `/api/` is held to the client address's
//! [`Budget`](crate::budget::Budget) ([`limit`]). Also the API's
//! description (`GET /api/openapi.json`, [`openapi`]) and the JSON answers
//! for a path under `/api/` that names nothing (404) or a method the path
//! does not take (405), so no client mistakes the page for an answer.

use std::{
    net::SocketAddr,
    sync::{atomic::Ordering::Relaxed, Arc, OnceLock},
    time::Instant,
};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::{header, HeaderMap, HeaderValue, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use tracing::debug;

use crate::{
    ctx::Ctx,
    http::{
        answers::{common, etag_of, fixed, if_none_match, Asked, Unpaid},
        error::HttpError,
    },
    live::feed::ApiBody,
};

/// Every request under `/api/` (and for a badge) spends one of the client
/// address's tokens, or is answered `429` with `Retry-After` and a tiny
/// body, before its handler runs: no answer is computed before it is paid
/// for. Exceptions, as they cost almost nothing: preflights (`OPTIONS`),
/// and a revalidation (`If-None-Match`) answered `304`. A revalidation is
/// charged first like any request and gets its token back when answered
/// `304`; from an address without a token it is marked unpaid ([`Asked`])
/// and answered `304` from what is known already, or `429`: whether it is
/// a `304` is known only once the answer is, and computing an answer is
/// the costly part.
pub(crate) async fn limit(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    req: Request,
    next: Next,
) -> Response {
    let paid = crate::http::error::is_api(req.uri().path());
    if !paid || req.method() == Method::OPTIONS {
        return next.run(req).await;
    }
    let revalidation = req.headers().contains_key(header::IF_NONE_MATCH);
    if ctx.budget.take(client.ip(), Instant::now()) {
        let response = next.run(req).await;
        if revalidation && response.status() == StatusCode::NOT_MODIFIED {
            ctx.budget.give_back(client.ip());
        }
        return response;
    }
    if !revalidation {
        return too_many(&ctx, client);
    }
    let mut req = req;
    req.extensions_mut().insert(Unpaid);
    let response = next.run(req).await;
    if response.status() == StatusCode::NOT_MODIFIED {
        return response;
    }
    too_many(&ctx, client)
}

/// The answer to a client address without a token.
fn too_many(ctx: &Ctx, client: SocketAddr) -> Response {
    ctx.metrics.api_limited.fetch_add(1, Relaxed);
    debug!(%client, "API answer refused: no token left for this address");
    let wait = ctx.budget.retry_after().as_secs_f64().ceil().max(1.0);
    let mut response = HttpError::TooManyRequests {
        message: "too many requests".into(),
        // Whole seconds, at least one (the budget refills in less).
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        retry_after: wait as u64,
    }
    .into_response();
    // Outside the JSON net (it is the outermost layer): readable by any
    // page, as before.
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

pub(crate) async fn servers(State(ctx): State<Arc<Ctx>>, asked: Asked) -> Response {
    let req = &asked.headers;
    let Some(state) = ctx.upstream.current().feed else {
        return HttpError::unavailable("the bridge has no list from the master yet", 1)
            .into_response();
    };
    let etag = state.etag();
    let mut h = common(Some(&etag));
    if if_none_match(req, &etag) {
        return (StatusCode::NOT_MODIFIED, h).into_response();
    }
    if !asked.paid {
        // (`limit` answers its 429.)
        return HttpError::Other(StatusCode::TOO_MANY_REQUESTS).into_response();
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    // Compressed off the request path's hot loop: the first request after a
    // change pays for it, the others share it.
    let body = tokio::task::spawn_blocking({
        let state = state.clone();
        move || {
            state.api_body();
        }
    })
    .await;
    if body.is_err() {
        return HttpError::Internal.into_response();
    }
    let bytes = encoded(req, state.api_body(), &mut h);
    (StatusCode::OK, h, bytes).into_response()
}

/// The form of `body` that `req` accepts best, with its `Content-Encoding`
/// added to `h`.
pub(crate) fn encoded(req: &HeaderMap, body: &ApiBody, h: &mut HeaderMap) -> bytes::Bytes {
    match accepted(req) {
        Encoding::Br => {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("br"));
            body.br.clone()
        }
        Encoding::Gzip => {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            body.gzip.clone()
        }
        Encoding::Identity => body.identity.clone(),
    }
}

/// The OpenAPI document and its `ETag`, built once per process.
struct Described {
    body: bytes::Bytes,
    etag: String,
}

/// `GET /api/openapi.json`: the API described (`protocol::openapi`).
pub(crate) async fn openapi(req: HeaderMap) -> Response {
    static DOCUMENT: OnceLock<Described> = OnceLock::new();
    let doc = DOCUMENT.get_or_init(|| {
        let body = protocol::json::to_vec(&protocol::openapi::document());
        Described {
            etag: etag_of(&body),
            body: body.into(),
        }
    });
    let mut h = common(Some(&doc.etag));
    h.remove(header::VARY);
    if if_none_match(&req, &doc.etag) {
        return (StatusCode::NOT_MODIFIED, h).into_response();
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    (StatusCode::OK, h, doc.body.clone()).into_response()
}

/// A path under `/api/` that the API does not have: 404 as JSON (not the
/// page, which a client could not tell from an answer).
pub(crate) async fn unknown() -> HttpError {
    HttpError::not_found("no such API path; see /api/openapi.json")
}

/// A method that an API path (or a badge) does not take: 405 as JSON,
/// with the methods it does take.
pub(crate) async fn wrong_method() -> HttpError {
    HttpError::MethodNotAllowed {
        allow: Some(HeaderValue::from_static("GET, HEAD, OPTIONS")),
    }
}

/// Cross-origin readers that send `If-None-Match` themselves ask first.
pub(crate) async fn preflight() -> Response {
    let mut h = common(None);
    h.extend(fixed(&[
        (header::ACCESS_CONTROL_ALLOW_METHODS, "GET, OPTIONS"),
        (header::ACCESS_CONTROL_ALLOW_HEADERS, "If-None-Match"),
        (header::ACCESS_CONTROL_MAX_AGE, "86400"),
    ]));
    (StatusCode::NO_CONTENT, h).into_response()
}

#[derive(Debug, PartialEq, Eq)]
enum Encoding {
    Br,
    Gzip,
    Identity,
}

/// The best encoding the request accepts (`q=0` refuses one).
fn accepted(req: &HeaderMap) -> Encoding {
    let mut br = false;
    let mut gzip = false;
    for v in req.get_all(header::ACCEPT_ENCODING) {
        let Ok(v) = v.to_str() else { continue };
        for item in v.split(',') {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            match name.as_str() {
                "br" => br = !refused,
                "gzip" => gzip = !refused,
                _ => {}
            }
        }
    }
    if br {
        Encoding::Br
    } else if gzip {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn picks_the_best_accepted_encoding() {
        let ae = header::ACCEPT_ENCODING;
        assert_eq!(accepted(&headers(&[])), Encoding::Identity);
        assert_eq!(
            accepted(&headers(&[(ae.clone(), "gzip, deflate, br")])),
            Encoding::Br
        );
        assert_eq!(accepted(&headers(&[(ae.clone(), "gzip")])), Encoding::Gzip);
        assert_eq!(
            accepted(&headers(&[(ae.clone(), "br;q=0, gzip;q=0.5")])),
            Encoding::Gzip
        );
        assert_eq!(accepted(&headers(&[(ae, "identity")])), Encoding::Identity);
    }

    #[test]
    fn etags_match_exactly_weakly_or_by_star() {
        let inm = header::IF_NONE_MATCH;
        let tag = "\"e-3\"";
        assert!(if_none_match(&headers(&[(inm.clone(), "\"e-3\"")]), tag));
        assert!(if_none_match(
            &headers(&[(inm.clone(), "\"x\", W/\"e-3\"")]),
            tag
        ));
        assert!(if_none_match(&headers(&[(inm.clone(), "*")]), tag));
        assert!(!if_none_match(&headers(&[(inm, "\"e-2\"")]), tag));
        assert!(!if_none_match(&headers(&[]), tag));
    }
}
