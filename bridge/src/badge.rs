//! Badges (`docs/protocol.md` §4.7): `GET /badge.svg` (the lobby's servers
//! and players online) and `GET /badge/{key}.svg` (one server: name,
//! players/max, lobby open or in game, or offline), small SVGs in the
//! flat style of shields.io for community sites to embed, and the same
//! texts as shields.io endpoint badges (`GET /api/shields.json`,
//! `GET /api/shields/{key}.json`) for sites that style their badges with
//! shields.io. Every text is cut short (and XML-escaped in an SVG), so any
//! name gives well-formed XML of a few hundred bytes.

use std::{fmt::Write, sync::Arc};

use axum::{
    extract::State,
    http::{header, StatusCode},
    response::{IntoResponse, Response},
};
use protocol::{api::Shield, ServerEntry, ServerKey};

use crate::{
    api::Asked,
    ctx::Ctx,
    history_api::{list_seq, server_state, unavailable, Computed, ServerState, NOT_SEEN},
    http::{HttpError, Path},
};

/// Characters of a name shown at most (names may have 100).
const NAME_CHARS: usize = 32;
/// How long caches may reuse a badge.
const CACHE: &str = "public, max-age=60";
/// How long shields.io may keep an endpoint badge: its own floor for
/// endpoint badges (it ignores less).
const SHIELD_CACHE_SECONDS: u32 = 300;

/// A badge's colour, named for what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tone {
    /// Online, open: come and play.
    Good,
    /// Online, a game running.
    Busy,
    /// Offline.
    Off,
}

impl Tone {
    /// The SVG fill.
    fn fill(self) -> &'static str {
        match self {
            Tone::Good => "#4c1",
            Tone::Busy => "#dfb317",
            Tone::Off => "#9f9f9f",
        }
    }

    /// shields.io's name for the same colour.
    fn shields_name(self) -> &'static str {
        match self {
            Tone::Good => "brightgreen",
            Tone::Busy => "yellow",
            Tone::Off => "lightgrey",
        }
    }
}

/// What a badge says, whichever form it takes: the SVG or shields.io's
/// endpoint JSON. The one place of the badges' text rules.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Face {
    label: String,
    message: String,
    tone: Tone,
}

impl Face {
    /// The lobby: servers and players online.
    fn lobby<'a>(servers: impl IntoIterator<Item = &'a ServerEntry>) -> Self {
        let (count, players) = servers.into_iter().fold((0usize, 0u64), |(n, p), e| {
            (n + 1, p + u64::from(e.stats.players.current))
        });
        Face {
            label: "lobby".into(),
            message: format!("{count} servers, {players} players"),
            tone: Tone::Good,
        }
    }

    /// One server: its name (cut), players/max and its lobby's state, or
    /// offline.
    fn server(state: &ServerState) -> Self {
        let s = &state.sample;
        let (message, tone) = match (state.online, s.open) {
            (false, _) => ("offline".to_owned(), Tone::Off),
            (true, true) => (format!("{}/{} open", s.players, s.max), Tone::Good),
            (true, false) => (format!("{}/{} in game", s.players, s.max), Tone::Busy),
        };
        Face {
            label: cut(&s.name, NAME_CHARS),
            message,
            tone,
        }
    }

    fn svg(&self) -> Computed {
        svg_answer(svg(&self.label, &self.message, self.tone.fill()))
    }

    fn shield(&self) -> Computed {
        Computed::ok(&Shield {
            schema_version: Shield::SCHEMA_VERSION,
            label: self.label.clone(),
            message: self.message.clone(),
            color: self.tone.shields_name().into(),
            cache_seconds: SHIELD_CACHE_SECONDS,
        })
    }
}

/// Text safe inside an XML element or attribute: `&<>"'` escaped, and
/// characters XML 1.0 does not allow dropped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => {}
            c => out.push(c),
        }
    }
    out
}

/// `text` cut to `max` characters (with an ellipsis when cut).
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(max - 1).collect();
    short.push('…');
    short
}

/// An estimate of a text's width in pixels at 11 px Verdana.
fn width(text: &str) -> usize {
    text.chars().count() * 7 + 10
}

/// A two-part badge: `label` on grey, `value` on `color`.
pub fn svg(label: &str, value: &str, color: &str) -> String {
    let (lw, vw) = (width(label), width(value));
    let total = lw + vw;
    let (label, value) = (escape(label), escape(value));
    let mut s = String::with_capacity(1024);
    // Writing to a String cannot fail.
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{label}: {value}"><title>{label}: {value}</title><linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient><clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/></clipPath><g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/><rect x="{lw}" width="{vw}" height="20" fill="{color}"/><rect width="{total}" height="20" fill="url(#s)"/></g><g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11"><text x="{lx}" y="14" unicode-bidi="isolate">{label}</text><text x="{vx}" y="14">{value}</text></g></svg>"##,
        lx = lw / 2,
        vx = lw + vw / 2,
    );
    s
}

fn svg_answer(body: String) -> Computed {
    Computed {
        status: StatusCode::OK,
        content_type: "image/svg+xml",
        body,
    }
}

/// The two forms of a badge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Svg,
    Shield,
}

impl Form {
    /// The form's answer for `face`.
    fn answer(self, face: &Face) -> Computed {
        match self {
            Form::Svg => face.svg(),
            Form::Shield => face.shield(),
        }
    }

    /// The key of its cached answers.
    fn cache_name(self) -> &'static str {
        match self {
            Form::Svg => "badge",
            Form::Shield => "shield",
        }
    }

    /// The file name's ending after the key (`{key}.svg`).
    fn suffix(self) -> &'static str {
        match self {
            Form::Svg => ".svg",
            Form::Shield => ".json",
        }
    }
}

/// The lobby's badge in `form`, cached until the list changes.
async fn lobby_in(ctx: Arc<Ctx>, form: Form, asked: Asked) -> Response {
    let feed = ctx.upstream.current().feed;
    let seq = list_seq(&ctx);
    ctx.answers
        .answer(
            &ctx.metrics,
            form.cache_name().into(),
            (seq, 0),
            &asked,
            &[(header::CACHE_CONTROL, CACHE)],
            move || {
                let servers = feed.iter().flat_map(|f| f.list().servers());
                form.answer(&Face::lobby(servers))
            },
        )
        .await
}

/// One server's badge in `form` (`file` is `{key}` and the form's
/// ending), cached until the list or the history changes.
async fn server_in(ctx: Arc<Ctx>, form: Form, file: &str, asked: Asked) -> Response {
    let Some(key) = file
        .strip_suffix(form.suffix())
        .and_then(|k| k.parse::<ServerKey>().ok())
    else {
        return HttpError::not_found(NOT_SEEN).into_response();
    };
    let generation = ctx.history.as_ref().map_or(0, |h| h.generation());
    let worker = ctx.clone();
    ctx.answers
        .answer(
            &ctx.metrics,
            format!("{}/{key}", form.cache_name()),
            (list_seq(&ctx), generation),
            &asked,
            &[(header::CACHE_CONTROL, CACHE)],
            move || match server_state(&worker, key) {
                Ok(Some(state)) => form.answer(&Face::server(&state)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_name_gives_well_formed_small_xml() {
        let names = [
            r#"<script>&"quotes" 'and' </svg>"#,
            "שרת עברי مرحبا",
            "\u{202E}reversed\u{202C} \u{1}ctl",
            &"W".repeat(100),
        ];
        for name in names {
            let text = svg(&cut(name, NAME_CHARS), "2/4 open", "#4c1");
            assert!(text.len() <= 4096, "{} bytes", text.len());
            let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            let shown: Vec<&str> = doc
                .descendants()
                .filter(|n| n.has_tag_name("text"))
                .filter_map(|n| n.text())
                .collect();
            let expected: String = cut(name, NAME_CHARS)
                .chars()
                .filter(|c| *c >= ' ')
                .collect();
            assert_eq!(shown, [expected.as_str(), "2/4 open"]);
        }
    }
}
