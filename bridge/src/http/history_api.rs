//! The history's HTTP answers (`docs/protocol.md` §2.2, §2.6):
//! `GET /api/servers/{key}`, `GET /api/servers/{key}/history?range=R`,
//! `GET /api/history?range=R`, and the weeks `GET /api/servers/{key}/week`
//! and `GET /api/week` (histories and weeks also as CSV, `?format=csv`).
//! Each answer is computed on a blocking
//! thread (it reads SQLite), cached until the list or the history changes,
//! revalidated by `ETag`, readable from any origin, and paid for from the
//! client address's budget like `/api/servers` (see [`crate::http::api::limit`]).

use std::{
    collections::HashMap,
    sync::{atomic::Ordering::Relaxed, Arc, Mutex},
};

use axum::{
    extract::State,
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use protocol::{
    api::{Csv, LobbyHistory, ServerHistory, Week, WEEK_DAYS},
    entry::ServerDetails,
    GameplayMode, Players, ServerKey,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{
    ctx::Ctx,
    db::{
        history::sample_of,
        store::{now_ms, range::Range, ServerSample, StoreError},
    },
    http::{
        api::{common, if_none_match, Asked},
        error::{HttpError, Path, Query},
    },
    metrics::Metrics,
};

/// Seconds a client is asked to wait (`Retry-After`) while the history's
/// database is unreachable: about the store's first delays between tries.
const RETRY_AFTER: u64 = 5;

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
        for (name, value) in extra {
            h.insert(name.clone(), HeaderValue::from_static(value));
        }
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

/// What a 404 for a key says.
pub(crate) const NOT_SEEN: &str = "no server with this key was seen";

fn not_found() -> HttpError {
    HttpError::not_found(NOT_SEEN)
}

/// `?range=` and `?format=`.
#[derive(Debug, Deserialize)]
pub(crate) struct RangeQuery {
    range: Option<String>,
    format: Option<String>,
}

/// `?format=` alone (the weeks).
#[derive(Debug, Deserialize)]
pub(crate) struct FormatQuery {
    format: Option<String>,
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
    fn parse(format: Option<&str>) -> Option<Self> {
        match format {
            None | Some("json") => Some(Self::Json),
            Some("csv") => Some(Self::Csv),
            Some(_) => None,
        }
    }

    /// How the cache tells the forms apart.
    fn suffix(self) -> &'static str {
        match self {
            Self::Json => "",
            Self::Csv => ".csv",
        }
    }
}

fn parse_range(q: &RangeQuery) -> Option<Range> {
    q.range.as_deref().and_then(Range::parse)
}

fn bad_range() -> HttpError {
    HttpError::BadRequest {
        message: "range must be one of 1h, 24h, 7d, 30d, 90d, 1y".into(),
        field: Some("range".into()),
    }
}

fn bad_format() -> HttpError {
    HttpError::BadRequest {
        message: "format must be json or csv".into(),
        field: Some("format".into()),
    }
}

/// The list's `seq` now (0 before the first list).
pub(crate) fn list_seq(ctx: &Ctx) -> u64 {
    ctx.upstream.current().feed.map_or(0, |f| f.seq)
}

/// A server's state now: listed (online) or its last recorded state.
pub(crate) struct ServerState {
    pub(crate) sample: ServerSample,
    pub(crate) online: bool,
    pub(crate) first_seen: i64,
    pub(crate) last_seen: i64,
    /// The history holds it (a server listed since the last sample, or
    /// left out by the history's bounds, is listed but not recorded).
    pub(crate) recorded: bool,
}

impl ServerState {
    /// The answer of `GET /api/servers/{key}` (with every field; the
    /// caller hides what viewers may not see); `None` for a recorded mode
    /// the protocol does not know (a damaged row).
    pub(crate) fn details(&self, key: ServerKey) -> Option<ServerDetails> {
        let s = &self.sample;
        Some(ServerDetails {
            key,
            name: s.name.clone(),
            address: s.address.clone(),
            port: s.port,
            online: self.online,
            players: Players {
                current: s.players,
                max: s.max,
            },
            is_lobby_open: s.open,
            gameplay_mode: GameplayMode::from_wire(u64::from(s.mode)).ok()?,
            first_seen: self.first_seen,
            last_seen: self.last_seen,
            recorded: self.recorded,
            join_url: None,
        })
    }
}

/// `key`'s state: from the published list when listed, else from the
/// history; `None` for a key never seen (or an unreadable row); an error
/// only while the history's database is unreachable (an answer then is
/// 503, [`unavailable`]: the recorded first and last seen are unknown).
pub(crate) fn server_state(ctx: &Ctx, key: ServerKey) -> Result<Option<ServerState>, StoreError> {
    let Some(history) = ctx.history.as_ref() else {
        return Ok(None);
    };
    let live = ctx.upstream.current().feed.and_then(|feed| {
        feed.list()
            .iter()
            .find(|k| k.key == Some(key))
            .and_then(sample_of)
    });
    let row = match history.store().server(key.0) {
        Ok(row) => row,
        Err(StoreError::Unavailable) => return Err(StoreError::Unavailable),
        Err(e) => {
            master::throttled!(warn, error = %e, "reading a server's recorded state failed");
            None
        }
    };
    Ok(match (live, row) {
        (Some(sample), row) => {
            let recorded = row.is_some();
            let (first_seen, last_seen) = row.map_or_else(
                || {
                    let now = now_ms();
                    (now, now)
                },
                |r| (r.first_seen, r.last_seen),
            );
            Some(ServerState {
                sample,
                online: true,
                first_seen,
                last_seen,
                recorded,
            })
        }
        (None, Some(row)) => Some(ServerState {
            sample: row.sample,
            online: false,
            first_seen: row.first_seen,
            last_seen: row.last_seen,
            recorded: true,
        }),
        (None, None) => None,
    })
}

/// The answer while the history's database is unreachable: 503 (with
/// `Retry-After`, never cached).
pub(crate) fn unavailable() -> Computed {
    Computed::refused(&HttpError::unavailable(
        "the history database is unreachable; try again shortly",
        RETRY_AFTER,
    ))
}

fn parse_key(key: &str) -> Option<ServerKey> {
    key.parse().ok()
}

fn stamp(ctx: &Ctx) -> (u64, u64) {
    let generation = ctx.history.as_ref().map_or(0, |h| h.generation());
    (list_seq(ctx), generation)
}

/// `GET /api/servers/{key}`.
pub(crate) async fn server(
    State(ctx): State<Arc<Ctx>>,
    Path(key): Path<String>,
    asked: Asked,
) -> Response {
    let Some(key) = parse_key(&key) else {
        return not_found().into_response();
    };
    let path = format!("server/{key}");
    let worker = ctx.clone();
    ctx.answers
        .answer(&ctx.metrics, path, stamp(&ctx), &asked, &[], move || {
            let state = match server_state(&worker, key) {
                Ok(Some(state)) => state,
                Ok(None) => return Computed::refused(&not_found()),
                Err(_) => return unavailable(),
            };
            match state.details(key) {
                Some(details) => Computed::ok(
                    &details
                        .seen_as(worker.visibility.viewers())
                        .joined_by(worker.join()),
                ),
                None => unreadable(&"a recorded gameplay mode is not 1 or 2"),
            }
        })
        .await
}

/// `GET /api/servers/{key}/history?range=R`.
pub(crate) async fn server_history(
    State(ctx): State<Arc<Ctx>>,
    Path(key): Path<String>,
    Query(q): Query<RangeQuery>,
    asked: Asked,
) -> Response {
    let Some(key) = parse_key(&key) else {
        return not_found().into_response();
    };
    let Some(range) = parse_range(&q) else {
        return bad_range().into_response();
    };
    let Some(format) = Format::parse(q.format.as_deref()) else {
        return bad_format().into_response();
    };
    let Some(history) = ctx.history.clone() else {
        return not_found().into_response();
    };
    let path = format!("history/{key}/{}{}", range.as_str(), format.suffix());
    // Only the history's changes change it (a key seen in the list but not
    // yet sampled has no points).
    let stamp = (0, history.generation());
    ctx.answers
        .answer(&ctx.metrics, path, stamp, &asked, &[], move || {
            let mut store = history.store();
            let row = match store.server(key.0) {
                Ok(Some(row)) => row,
                Ok(None) => {
                    return Computed::refused(&HttpError::not_found(
                        "no server with this key was recorded",
                    ))
                }
                Err(e) => return internal(&e),
            };
            match store.server_history(key.0, row.first_seen, range, history.sample_ms(), now_ms())
            {
                Ok((step, points)) => Computed::ok_as(
                    format,
                    &ServerHistory {
                        key,
                        range: range.name(),
                        step: seconds(step),
                        points,
                    },
                ),
                Err(e) => internal(&e),
            }
        })
        .await
}

/// `GET /api/history?range=R`.
pub(crate) async fn lobby_history(
    State(ctx): State<Arc<Ctx>>,
    Query(q): Query<RangeQuery>,
    asked: Asked,
) -> Response {
    let Some(range) = parse_range(&q) else {
        return bad_range().into_response();
    };
    let Some(format) = Format::parse(q.format.as_deref()) else {
        return bad_format().into_response();
    };
    let Some(history) = ctx.history.clone() else {
        return HttpError::unavailable("no history", RETRY_AFTER).into_response();
    };
    let path = format!("history/{}{}", range.as_str(), format.suffix());
    let stamp = (0, history.generation());
    ctx.answers
        .answer(&ctx.metrics, path, stamp, &asked, &[], move || {
            let mut store = history.store();
            match store.lobby_history(range, history.sample_ms(), now_ms()) {
                Ok((step, points)) => Computed::ok_as(
                    format,
                    &LobbyHistory {
                        range: range.name(),
                        step: seconds(step),
                        points,
                    },
                ),
                Err(e) => internal(&e),
            }
        })
        .await
}

/// The stamp of a week's answer: the hour it holds for (the week folds
/// whole hours, so it changes once an hour).
fn week_stamp() -> (u64, u64) {
    (
        0,
        u64::try_from(now_ms().div_euclid(3_600_000)).unwrap_or(0),
    )
}

/// `GET /api/servers/{key}/week`.
pub(crate) async fn server_week(
    State(ctx): State<Arc<Ctx>>,
    Path(key): Path<String>,
    Query(q): Query<FormatQuery>,
    asked: Asked,
) -> Response {
    let Some(key) = parse_key(&key) else {
        return not_found().into_response();
    };
    let Some(format) = Format::parse(q.format.as_deref()) else {
        return bad_format().into_response();
    };
    let Some(history) = ctx.history.clone() else {
        return not_found().into_response();
    };
    let path = format!("week/{key}{}", format.suffix());
    ctx.answers
        .answer(&ctx.metrics, path, week_stamp(), &asked, &[], move || {
            let mut store = history.store();
            match store.server(key.0) {
                Ok(Some(_)) => {}
                Ok(None) => {
                    return Computed::refused(&HttpError::not_found(
                        "no server with this key was recorded",
                    ))
                    .unkept()
                }
                Err(e) => return internal(&e),
            }
            match store.server_week(key.0, now_ms()) {
                Ok(hours) => Computed::ok_as(
                    format,
                    &Week {
                        key: Some(key),
                        days: WEEK_DAYS,
                        hours,
                    },
                ),
                Err(e) => internal(&e),
            }
        })
        .await
}

/// `GET /api/week`.
pub(crate) async fn lobby_week(
    State(ctx): State<Arc<Ctx>>,
    Query(q): Query<FormatQuery>,
    asked: Asked,
) -> Response {
    let Some(format) = Format::parse(q.format.as_deref()) else {
        return bad_format().into_response();
    };
    let Some(history) = ctx.history.clone() else {
        return HttpError::unavailable("no history", RETRY_AFTER).into_response();
    };
    let path = format!("week{}", format.suffix());
    ctx.answers
        .answer(&ctx.metrics, path, week_stamp(), &asked, &[], move || {
            let mut store = history.store();
            match store.lobby_week(now_ms()) {
                Ok(hours) => Computed::ok_as(
                    format,
                    &Week {
                        key: None,
                        days: WEEK_DAYS,
                        hours,
                    },
                ),
                Err(e) => internal(&e),
            }
        })
        .await
}

/// A step in milliseconds as the answers give it: whole seconds.
fn seconds(step_ms: i64) -> u64 {
    u64::try_from(step_ms / 1000).unwrap_or(0)
}

fn internal(e: &StoreError) -> Computed {
    if matches!(e, StoreError::Unavailable) {
        return unavailable();
    }
    unreadable(e)
}

fn unreadable(e: &dyn std::fmt::Display) -> Computed {
    master::throttled!(warn, error = %e, "reading the history failed");
    Computed::refused(&HttpError::Internal)
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
