//! Badges (`docs/protocol.md` §4.7): `GET /badge.svg` (the lobby's servers
//! and players online) and `GET /badge/{key}.svg` (one server: name,
//! players/max, lobby open or in game, or offline), small SVGs in the
//! flat style of shields.io for community sites to embed, and the same
//! texts as shields.io endpoint badges (`GET /api/shields.json`,
//! `GET /api/shields/{key}.json`) for sites that style their badges with
//! shields.io. What they say, and the drawing the SVG shares with the
//! cards, is [`crate::http::face`]'s: every text is cut short (and XML-escaped
//! in an SVG), so any name gives well-formed XML of a few hundred bytes.
//! A face is served, in each of its forms (the cards' too), by one pair
//! of handlers here ([`lobby_in`], [`server_in`]): one cache, one rule for
//! the file name.

use std::sync::Arc;

use axum::{
    extract::State,
    http::header,
    response::{IntoResponse, Response},
};
use protocol::ServerKey;

use crate::{
    ctx::Ctx,
    http::{
        answers::Asked,
        answers::Computed,
        error::{HttpError, Path},
        face::{Face, Layout},
        history_api::{list_seq, server_state, unavailable, NOT_SEEN},
    },
};

/// How long caches may reuse a badge (or a card).
pub(crate) const CACHE: &str = "public, max-age=60";

fn svg_answer(body: String) -> Computed {
    Computed::ok_typed("image/svg+xml", body.into())
}

/// The forms a face is served in: the badges' two and the card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// The SVG badge.
    Svg,
    /// The shields.io endpoint badge (JSON).
    Shield,
    /// The 1200×630 PNG card ([`crate::http::card`]).
    Card,
}

impl Form {
    /// The form's answer for `face` (a card drawn, or taken from those
    /// drawn, by `ctx`).
    fn answer(self, face: &Face, ctx: &Ctx) -> Computed {
        match self {
            Form::Svg => svg_answer(face.svg(&Layout::badge(face))),
            Form::Shield => Computed::ok(&face.shield()),
            Form::Card => ctx.cards.answer(face, &ctx.metrics),
        }
    }

    /// The key of its cached answers.
    fn cache_name(self) -> &'static str {
        match self {
            Form::Svg => "badge",
            Form::Shield => "shield",
            Form::Card => "card",
        }
    }

    /// The file name's ending after the key (`{key}.svg`).
    fn suffix(self) -> &'static str {
        match self {
            Form::Svg => ".svg",
            Form::Shield => ".json",
            Form::Card => ".png",
        }
    }
}

/// The lobby's face in `form`, cached until the list changes.
pub(crate) async fn lobby_in(ctx: Arc<Ctx>, form: Form, asked: Asked) -> Response {
    let feed = ctx.upstream.current().feed;
    let seq = list_seq(&ctx);
    let worker = ctx.clone();
    ctx.answers
        .answer(
            &ctx.metrics,
            form.cache_name().into(),
            (seq, 0),
            &asked,
            &[(header::CACHE_CONTROL, CACHE)],
            move || {
                let servers = feed.iter().flat_map(|f| f.list().servers());
                form.answer(&Face::lobby(servers), &worker)
            },
        )
        .await
}

/// One server's face in `form` (`file` is `{key}` and the form's
/// ending), cached until the list or the history changes.
pub(crate) async fn server_in(ctx: Arc<Ctx>, form: Form, file: &str, asked: Asked) -> Response {
    let Some(key) = file
        .strip_suffix(form.suffix())
        .and_then(|k| k.parse::<ServerKey>().ok())
    else {
        return HttpError::not_found(NOT_SEEN).into_response();
    };
    let generation = ctx.history.generation();
    let worker = ctx.clone();
    ctx.answers
        .answer(
            &ctx.metrics,
            format!("{}/{key}", form.cache_name()),
            (list_seq(&ctx), generation),
            &asked,
            &[(header::CACHE_CONTROL, CACHE)],
            move || match server_state(&worker, key) {
                Ok(Some(state)) => form.answer(&Face::server(&state), &worker),
                Ok(None) => Computed::refused(&HttpError::not_found(NOT_SEEN)),
                Err(_) => unavailable(),
            },
        )
        .await
}

/// `GET /badge.svg`.
pub(crate) async fn lobby(State(ctx): State<Arc<Ctx>>, asked: Asked) -> Response {
    lobby_in(ctx, Form::Svg, asked).await
}

/// `GET /badge/{key}.svg`.
pub(crate) async fn server(
    State(ctx): State<Arc<Ctx>>,
    Path(file): Path<String>,
    asked: Asked,
) -> Response {
    server_in(ctx, Form::Svg, &file, asked).await
}

/// `GET /api/shields.json`.
pub(crate) async fn lobby_shield(State(ctx): State<Arc<Ctx>>, asked: Asked) -> Response {
    lobby_in(ctx, Form::Shield, asked).await
}

/// `GET /api/shields/{key}.json`.
pub(crate) async fn server_shield(
    State(ctx): State<Arc<Ctx>>,
    Path(file): Path<String>,
    asked: Asked,
) -> Response {
    server_in(ctx, Form::Shield, &file, asked).await
}

/// `GET /card.png`.
pub(crate) async fn lobby_card(State(ctx): State<Arc<Ctx>>, asked: Asked) -> Response {
    lobby_in(ctx, Form::Card, asked).await
}

/// `GET /card/{key}.png`.
pub(crate) async fn server_card(
    State(ctx): State<Arc<Ctx>>,
    Path(file): Path<String>,
    asked: Asked,
) -> Response {
    server_in(ctx, Form::Card, &file, asked).await
}
