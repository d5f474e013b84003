//! What an answer under `/api/` (and a badge's or card's) is, once its
//! handler has computed it: asked for paid or unpaid ([`Asked`]), kept
//! until what it was computed from changes ([`Answers`], bounded by count
//! and bytes), tagged by a digest of its body and revalidated by it, and
//! readable from any origin ([`common`]).

use std::{
    collections::HashMap,
    sync::{atomic::Ordering::Relaxed, Mutex},
};

use axum::{
    extract::FromRequestParts,
    http::{header, request::Parts, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use protocol::api::Csv;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::{http::error::HttpError, metrics::Metrics};

/// Seconds a client is asked to wait (`Retry-After`) while the history's
/// database is unreachable: about the store's first delays between tries.
pub(crate) const RETRY_AFTER: u64 = 5;

/// Answers cached at most; the cache starts over when full.
const CACHED: usize = 1024;
/// Bytes of bodies cached at most: a PNG card is some tens of KiB, so
/// 1,024 distinct cards alone would hold about 50 MB. The cache starts
/// over when the next answer would not fit.
const CACHED_BYTES: usize = 16 * 1024 * 1024;

/// Answers computed since the list or the history last changed, by path.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    cache: Mutex<Kept>,
}

/// The cached answers and the bytes of their bodies.
#[derive(Debug, Default)]
struct Kept {
    by_path: HashMap<String, Cached>,
    bytes: usize,
}

impl Kept {
    fn get(&self, path: &str) -> Option<&Cached> {
        self.by_path.get(path)
    }

    /// Keeps `cached` for `path`, starting over first when it would make
    /// more than [`CACHED`] answers or [`CACHED_BYTES`] of bodies (an
    /// answer larger than that alone is not kept).
    fn keep(&mut self, path: String, cached: Cached) {
        let size = cached.body.len();
        if size > CACHED_BYTES {
            return;
        }
        if let Some(old) = self.by_path.remove(&path) {
            self.bytes -= old.body.len();
        }
        if self.by_path.len() >= CACHED || self.bytes + size > CACHED_BYTES {
            self.by_path.clear();
            self.bytes = 0;
        }
        self.bytes += size;
        self.by_path.insert(path, cached);
    }
}

#[derive(Debug, Clone)]
struct Cached {
    /// The list's `seq` and the history's generation it was computed at.
    stamp: (u64, u64),
    status: StatusCode,
    content_type: &'static str,
    etag: String,
    body: Bytes,
}

/// What an answer's computation gives: a status and a JSON body (or, for
/// badges and cards, another type).
pub(crate) struct Computed {
    pub(crate) status: StatusCode,
    pub(crate) content_type: &'static str,
    pub(crate) body: Bytes,
    /// Whether the answer may be kept until its stamp changes (see
    /// [`Computed::unkept`]).
    pub(crate) keep: bool,
}

impl Computed {
    pub(crate) fn json(status: StatusCode, body: String) -> Self {
        Self {
            status,
            content_type: "application/json",
            body: body.into(),
            keep: true,
        }
    }

    /// The same answer, not kept: for one whose stamp would outlive it
    /// (a week's refusal of a key not yet recorded is stamped by the hour,
    /// but the key may be recorded at the next sample).
    pub(crate) fn unkept(self) -> Self {
        Self {
            keep: false,
            ..self
        }
    }

    /// A `200` of another type than JSON (a CSV, a badge, a card).
    pub(crate) fn ok_typed(content_type: &'static str, body: Bytes) -> Self {
        Self {
            status: StatusCode::OK,
            content_type,
            body,
            keep: true,
        }
    }

    /// A `200` whose body is `answer`, one of the protocol's answer types.
    pub(crate) fn ok<T: Serialize>(answer: &T) -> Self {
        Self::json(StatusCode::OK, protocol::json::to_string(answer))
    }

    /// A refusal: the error's status and its documented body.
    pub(crate) fn refused(e: &HttpError) -> Self {
        Self::json(e.status(), protocol::json::to_string(&e.body()))
    }

    /// A `200` whose body is `answer` in the `format` asked for.
    pub(crate) fn ok_as<T: Serialize + Csv>(format: Format, answer: &T) -> Self {
        match format {
            Format::Json => Self::ok(answer),
            Format::Csv => Self::ok_typed("text/csv; charset=utf-8", answer.csv().into()),
        }
    }
}

impl Answers {
    /// The cached answer for `path` at `stamp`, or `compute`'s (on a
    /// blocking thread), as a response to `asked` (unpaid: from the cache
    /// only).
    pub(crate) async fn answer(
        &self,
        metrics: &Metrics,
        path: String,
        stamp: (u64, u64),
        asked: &Asked,
        extra: &[(header::HeaderName, &'static str)],
        compute: impl FnOnce() -> Computed + Send + 'static,
    ) -> Response {
        let hit = self.lock().get(&path).filter(|c| c.stamp == stamp).cloned();
        let cached = match hit {
            Some(cached) => cached,
            // Nothing computed for a request nobody paid for.
            // (`api::limit` answers its 429.)
            None if !asked.paid => {
                return HttpError::Other(StatusCode::TOO_MANY_REQUESTS).into_response()
            }
            None => {
                metrics.api_computed.fetch_add(1, Relaxed);
                let Ok(computed) = tokio::task::spawn_blocking(compute).await else {
                    return HttpError::Internal.into_response();
                };
                let keep = computed.keep && computed.status != StatusCode::SERVICE_UNAVAILABLE;
                let cached = Cached {
                    stamp,
                    status: computed.status,
                    content_type: computed.content_type,
                    etag: etag_of(&computed.body),
                    body: computed.body,
                };
                // An outage's answer is not kept: the next request asks the
                // database again.
                if keep {
                    self.lock().keep(path, cached.clone());
                }
                cached
            }
        };
        let mut h = common(Some(&cached.etag));
        h.remove(header::VARY);
        h.extend(fixed(extra));
        if cached.status == StatusCode::SERVICE_UNAVAILABLE {
            h.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER));
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
        if cached.status == StatusCode::OK && if_none_match(&asked.headers, &cached.etag) {
            return (StatusCode::NOT_MODIFIED, h).into_response();
        }
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(cached.content_type),
        );
        (cached.status, h, cached.body).into_response()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The `ETag` of an answer whose body is `body`: a digest of it, so equal
/// answers have equal tags on every bridge.
pub(crate) fn etag_of(body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"h{hex}\"")
}

/// The form a history answer is asked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Csv,
}

impl Format {
    /// `?format=`: absent or `json`, or `csv`; `None` for anything else
    /// (HTTP 400).
    pub(crate) fn parse(format: Option<&str>) -> Option<Self> {
        match format {
            None | Some("json") => Some(Self::Json),
            Some("csv") => Some(Self::Csv),
            Some(_) => None,
        }
    }

    /// How the cache tells the forms apart.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Self::Json => "",
            Self::Csv => ".csv",
        }
    }
}

/// Marks a request [`crate::http::api::limit`] let through unpaid: a revalidation from an
/// address without a token.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unpaid;

/// What a handler under `/api/` knows of its request: the headers, and
/// whether it was paid for. One that was not may be answered `304` from
/// what is known already, never with work (its answer is replaced by a
/// `429` otherwise).
#[derive(Debug)]
pub(crate) struct Asked {
    pub(crate) headers: HeaderMap,
    pub(crate) paid: bool,
}

impl<S: Send + Sync> FromRequestParts<S> for Asked {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self {
            headers: parts.headers.clone(),
            paid: parts.extensions.get::<Unpaid>().is_none(),
        })
    }
}

/// The headers every answer carries: any page may read the list, and a
/// cache must ask again (with the ETag) before reusing it.
pub(crate) fn common(etag: Option<&str>) -> HeaderMap {
    let mut h = fixed(&[
        (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        (header::ACCESS_CONTROL_EXPOSE_HEADERS, "ETag"),
        (header::CACHE_CONTROL, "no-cache"),
        (header::VARY, "Accept-Encoding"),
    ]);
    if let Some(v) = etag.and_then(|e| HeaderValue::from_str(e).ok()) {
        h.insert(header::ETAG, v);
    }
    h
}

/// Headers of fixed values; extending a map with them replaces its
/// values of those names.
pub(crate) fn fixed(headers: &[(header::HeaderName, &'static str)]) -> HeaderMap {
    let value = |(name, v): &(header::HeaderName, &'static str)| {
        (name.clone(), HeaderValue::from_static(v))
    };
    headers.iter().map(value).collect()
}

/// Whether the request's `If-None-Match` names `etag` (or `*`).
pub(crate) fn if_none_match(req: &HeaderMap, etag: &str) -> bool {
    req.get_all(header::IF_NONE_MATCH).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',')
                .map(|t| t.trim().trim_start_matches("W/"))
                .any(|t| t == etag || t == "*")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(bytes: usize) -> Cached {
        Cached {
            stamp: (1, 0),
            status: StatusCode::OK,
            content_type: "image/png",
            etag: String::new(),
            body: Bytes::from(vec![0u8; bytes]),
        }
    }

    #[test]
    fn the_answers_kept_are_bounded_by_count_and_by_bytes() {
        // Distinct cards of 60 KB each: far fewer than 1,024 fit.
        let mut kept = Kept::default();
        for i in 0..CACHED {
            kept.keep(format!("card/{i}"), answer(60_000));
            assert!(kept.bytes <= CACHED_BYTES, "{} bytes", kept.bytes);
            assert_eq!(
                kept.bytes,
                kept.by_path.values().map(|c| c.body.len()).sum::<usize>()
            );
        }
        assert!(kept.by_path.len() < CACHED_BYTES / 60_000 + 1);
        assert!(kept.get(&format!("card/{}", CACHED - 1)).is_some());

        // Small answers: the count bounds them.
        let mut kept = Kept::default();
        for i in 0..=CACHED {
            kept.keep(format!("api/{i}"), answer(100));
            assert!(kept.by_path.len() <= CACHED);
        }
        assert_eq!(kept.by_path.len(), 1, "started over at the 1,025th");

        // The same path again replaces its bytes; one too large is not kept.
        let mut kept = Kept::default();
        kept.keep("a".into(), answer(1_000));
        kept.keep("a".into(), answer(3_000));
        assert_eq!((kept.by_path.len(), kept.bytes), (1, 3_000));
        kept.keep("huge".into(), answer(CACHED_BYTES + 1));
        assert_eq!((kept.by_path.len(), kept.bytes), (1, 3_000));
    }
}
