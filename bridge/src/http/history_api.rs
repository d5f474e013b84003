//! The history's HTTP answers (`docs/protocol.md` §2.2, §2.6):
//! `GET /api/servers/{key}`, `GET /api/servers/{key}/history?range=R`,
//! `GET /api/history?range=R`, and the weeks `GET /api/servers/{key}/week`
//! and `GET /api/week` (histories and weeks also as CSV, `?format=csv`).
//! Each answer is computed on a blocking
//! thread (it reads SQLite), cached until the list or the history changes,
//! revalidated by `ETag`, readable from any origin, and paid for from the
//! client address's budget like `/api/servers` (see [`crate::http::api::limit`]).

use std::sync::Arc;

use axum::{
    extract::State,
    response::{IntoResponse, Response},
};
use protocol::{
    api::{Csv, HistoryRange, LobbyHistory, ServerHistory, Week, WeekHour, WEEK_DAYS},
    ServerKey,
};
use serde::{Deserialize, Serialize};

use crate::{
    ctx::Ctx,
    db::{
        history::{sample_of, History},
        store::{now_ms, ServerRow, Store, StoreError},
    },
    http::{
        answers::{Asked, Computed, Format, RETRY_AFTER},
        error::{HttpError, Path, Query},
        state::ServerState,
    },
};

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

impl RangeQuery {
    /// The range and format asked for, or the 400 that names the first
    /// one wrong.
    fn parse(&self) -> Result<(HistoryRange, Format), HttpError> {
        let range = self.range.as_deref().and_then(HistoryRange::parse);
        let range = range.ok_or_else(|| HttpError::BadRequest {
            message: "range must be one of 1h, 24h, 7d, 30d, 90d, 1y".into(),
            field: Some("range".into()),
        })?;
        Ok((range, parse_format(self.format.as_deref())?))
    }
}

/// `?format=`, or the 400 that names it.
fn parse_format(format: Option<&str>) -> Result<Format, HttpError> {
    Format::parse(format).ok_or_else(|| HttpError::BadRequest {
        message: "format must be json or csv".into(),
        field: Some("format".into()),
    })
}

/// The list's `seq` now (0 before the first list).
pub(crate) fn list_seq(ctx: &Ctx) -> u64 {
    ctx.upstream.current().feed.map_or(0, |f| f.seq)
}

/// `key`'s state: from the published list when listed, else from the
/// history; `None` for a key never seen (neither listed now nor recorded:
/// one that left before a sample listed it was never recorded) or an
/// unreadable row; an error only while the history's database is
/// unreachable (an answer then is 503, [`unavailable`]: the recorded first
/// and last seen are unknown).
pub(crate) fn server_state(ctx: &Ctx, key: ServerKey) -> Result<Option<ServerState>, StoreError> {
    let history = &ctx.history;
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
    let generation = ctx.history.generation();
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
            match state.details(key, &worker.visibility, worker.join()) {
                Some(details) => Computed::ok(&details),
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
    let (range, format) = match q.parse() {
        Ok(asked) => asked,
        Err(e) => return e.into_response(),
    };
    let path = format!("history/{key}/{}{}", range.as_str(), format.suffix());
    // Only the history's changes change it (a key seen in the list but not
    // yet sampled has no points).
    let stamp = (0, ctx.history.generation());
    from_history(&ctx, path, stamp, &asked, move |store, history| {
        let row = match recorded(store, key) {
            Ok(row) => row,
            Err(refused) => return refused,
        };
        let (first_seen, sample_ms) = (row.first_seen, history.sample_ms());
        let points = store.server_history(key.0, first_seen, range, sample_ms, now_ms());
        let answer = points.map(|(step, points)| ServerHistory {
            key,
            range,
            step: seconds(step),
            points,
        });
        answered(format, answer)
    })
    .await
}

/// `GET /api/history?range=R`.
pub(crate) async fn lobby_history(
    State(ctx): State<Arc<Ctx>>,
    Query(q): Query<RangeQuery>,
    asked: Asked,
) -> Response {
    let (range, format) = match q.parse() {
        Ok(asked) => asked,
        Err(e) => return e.into_response(),
    };
    let path = format!("history/{}{}", range.as_str(), format.suffix());
    let stamp = (0, ctx.history.generation());
    from_history(&ctx, path, stamp, &asked, move |store, history| {
        let points = store.lobby_history(range, history.sample_ms(), now_ms());
        let answer = points.map(|(step, points)| LobbyHistory {
            range,
            step: seconds(step),
            points,
        });
        answered(format, answer)
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
    let format = match parse_format(q.format.as_deref()) {
        Ok(format) => format,
        Err(e) => return e.into_response(),
    };
    let path = format!("week/{key}{}", format.suffix());
    from_history(&ctx, path, week_stamp(), &asked, move |store, _| {
        if let Err(refused) = recorded(store, key) {
            // Not kept for the hour the stamp holds: the key may be
            // recorded a moment later.
            return refused.unkept();
        }
        answered(
            format,
            store.server_week(key.0, now_ms()).map(week(Some(key))),
        )
    })
    .await
}

/// `GET /api/week`.
pub(crate) async fn lobby_week(
    State(ctx): State<Arc<Ctx>>,
    Query(q): Query<FormatQuery>,
    asked: Asked,
) -> Response {
    let format = match parse_format(q.format.as_deref()) {
        Ok(format) => format,
        Err(e) => return e.into_response(),
    };
    let path = format!("week{}", format.suffix());
    from_history(&ctx, path, week_stamp(), &asked, move |store, _| {
        answered(format, store.lobby_week(now_ms()).map(week(None)))
    })
    .await
}

/// Answers `path` at `stamp` from the history's store: `compute` runs on
/// a blocking thread, only when no answer kept for `stamp` is there.
async fn from_history(
    ctx: &Ctx,
    path: String,
    stamp: (u64, u64),
    asked: &Asked,
    compute: impl FnOnce(&mut Store, &History) -> Computed + Send + 'static,
) -> Response {
    let history = ctx.history.clone();
    ctx.answers
        .answer(&ctx.metrics, path, stamp, asked, &[], move || {
            compute(&mut history.store(), &history)
        })
        .await
}

/// `key`'s recorded row, or the answer when it has none (404) or the
/// database cannot say.
fn recorded(store: &mut Store, key: ServerKey) -> Result<ServerRow, Computed> {
    match store.server(key.0) {
        Ok(Some(row)) => Ok(row),
        Ok(None) => Err(Computed::refused(&HttpError::not_found(
            "no server with this key was recorded",
        ))),
        Err(e) => Err(internal(&e)),
    }
}

/// A week of hours, for `key` or the lobby.
fn week(key: Option<ServerKey>) -> impl FnOnce(Vec<WeekHour>) -> Week {
    move |hours| Week {
        key,
        days: WEEK_DAYS,
        hours,
    }
}

/// `answer` in `format`, or the answer when the database could not give it.
fn answered<T: Serialize + Csv>(format: Format, answer: Result<T, StoreError>) -> Computed {
    match answer {
        Ok(answer) => Computed::ok_as(format, &answer),
        Err(e) => internal(&e),
    }
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
