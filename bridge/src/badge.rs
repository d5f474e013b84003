//! Badges (`docs/protocol.md` §4.7): `GET /badge.svg` (the lobby's servers
//! and players online) and `GET /badge/{key}.svg` (one server: name,
//! players/max, lobby open or in game, or offline), small SVGs in the
//! flat style of shields.io for community sites to embed. Every text is
//! XML-escaped and cut short, so any name gives well-formed XML of a few
//! hundred bytes.

use std::{fmt::Write, sync::Arc};

use axum::{
    extract::{Path, State},
    http::{header, StatusCode},
    response::Response,
};
use protocol::ServerKey;

use crate::{
    api::Asked,
    ctx::Ctx,
    history_api::{error, list_seq, server_state, unavailable, Computed},
};

/// Characters of a name shown at most (names may have 100).
const NAME_CHARS: usize = 32;
/// How long caches may reuse a badge.
const CACHE: &str = "public, max-age=60";

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

/// `GET /badge.svg`.
pub(crate) async fn lobby(State(ctx): State<Arc<Ctx>>, asked: Asked) -> Response {
    let feed = ctx.upstream.current().feed;
    let seq = list_seq(&ctx);
    ctx.answers
        .answer(
            &ctx.metrics,
            "badge".into(),
            (seq, 0),
            &asked,
            &[(header::CACHE_CONTROL, CACHE)],
            move || {
                let entries = feed.as_ref().map(|f| f.entries().clone());
                let entries = entries.as_deref().unwrap_or_default();
                let players: u64 = entries
                    .iter()
                    .map(|k| u64::from(k.entry.stats.players.current))
                    .sum();
                let value = format!("{} servers, {players} players", entries.len());
                svg_answer(svg("lobby", &value, "#4c1"))
            },
        )
        .await
}

/// `GET /badge/{key}.svg`.
pub(crate) async fn server(
    State(ctx): State<Arc<Ctx>>,
    Path(file): Path<String>,
    asked: Asked,
) -> Response {
    let Some(key) = file
        .strip_suffix(".svg")
        .and_then(|k| k.parse::<ServerKey>().ok())
    else {
        return error(StatusCode::NOT_FOUND, "no server with this key was seen");
    };
    let generation = ctx.history.as_ref().map_or(0, |h| h.generation());
    let worker = ctx.clone();
    ctx.answers
        .answer(
            &ctx.metrics,
            format!("badge/{key}"),
            (list_seq(&ctx), generation),
            &asked,
            &[(header::CACHE_CONTROL, CACHE)],
            move || {
                let state = match server_state(&worker, key) {
                    Ok(Some(state)) => state,
                    Ok(None) => {
                        return Computed::json(
                            StatusCode::NOT_FOUND,
                            r#"{"error":"no server with this key was seen"}"#.into(),
                        )
                    }
                    Err(_) => return unavailable(),
                };
                let s = &state.sample;
                let name = cut(&s.name, NAME_CHARS);
                let (value, color) = match (state.online, s.open) {
                    (false, _) => ("offline".to_owned(), "#9f9f9f"),
                    (true, true) => (format!("{}/{} open", s.players, s.max), "#4c1"),
                    (true, false) => (format!("{}/{} in game", s.players, s.max), "#dfb317"),
                };
                svg_answer(svg(&name, &value, color))
            },
        )
        .await
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
