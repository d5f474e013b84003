//! What a badge or a card says, and the one drawing both are made of
//! (`docs/protocol.md` §4.7, §2.6 "Cards").
//!
//! [`Face`] holds the facts (a label, a message, a colour named for what
//! it means, and a detail line) decided once, here, for the lobby and for
//! one server. Every form shows that one face: the SVG badge, shields.io's
//! endpoint JSON, and the 1200×630 PNG card. The badge and the card are one
//! drawing, [`Face::svg`]: a label panel in grey and a message panel in the
//! face's colour, each text escaped and placed by the same function; a
//! [`Layout`] only says where the panels go and how large the texts are
//! (side by side in 20 px for a badge, stacked in 1200×630 for a card,
//! which also shows the detail line). The card's PNG is that SVG rasterized
//! ([`crate::http::card`]).

use std::fmt::Write;

use protocol::{api::Shield, GameplayMode, ServerEntry};

use crate::http::{markup::escape, state::ServerState};

/// Characters of a name shown at most (names may have 100).
pub(crate) const NAME_CHARS: usize = 32;
/// How long shields.io may keep an endpoint badge: its own floor for
/// endpoint badges (it ignores less).
const SHIELD_CACHE_SECONDS: u32 = 300;
/// The one font family both drawings name: the badge's viewers pick the
/// first they have; the card's renderer has only the font it ships
/// ([`crate::http::card`]), DejaVu Sans.
const FONT_FAMILY: &str = "Verdana,Geneva,DejaVu Sans,sans-serif";
/// The label panel's grey.
const LABEL_FILL: &str = "#555";

/// A face's colour, named for what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Tone {
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

/// What a badge or a card says, whichever form it takes. The one place of
/// their text rules.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Face {
    /// A server's name (cut to [`NAME_CHARS`]), or `lobby`.
    pub(crate) label: String,
    /// Players and the lobby's state, or the lobby's counts.
    pub(crate) message: String,
    pub(crate) tone: Tone,
    /// A line only the card has room for: the gameplay mode.
    pub(crate) detail: Option<String>,
}

impl Face {
    /// The lobby: servers and players online.
    pub(crate) fn lobby<'a>(servers: impl IntoIterator<Item = &'a ServerEntry>) -> Self {
        let (count, players) = servers.into_iter().fold((0usize, 0u64), |(n, p), e| {
            (n + 1, p + u64::from(e.stats.players.current))
        });
        Face {
            label: "lobby".into(),
            message: format!("{count} servers, {players} players"),
            tone: Tone::Good,
            detail: None,
        }
    }

    /// One server: its name (cut), players/max and its lobby's state, or
    /// offline; its gameplay mode as the detail.
    pub(crate) fn server(state: &ServerState) -> Self {
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
            detail: GameplayMode::from_wire(u64::from(s.mode))
                .ok()
                .map(|m| m.label().to_owned()),
        }
    }

    /// shields.io's endpoint badge of this face.
    pub(crate) fn shield(&self) -> Shield {
        Shield {
            schema_version: Shield::SCHEMA_VERSION,
            label: self.label.clone(),
            message: self.message.clone(),
            color: self.tone.shields_name().into(),
            cache_seconds: SHIELD_CACHE_SECONDS,
        }
    }

    /// The drawing of this face in `layout`: the badge's or the card's SVG.
    pub(crate) fn svg(&self, layout: &Layout) -> String {
        let (label, value) = (escape(&self.label), escape(&self.message));
        let Layout {
            width,
            height,
            radius,
            label_panel: lp,
            value_panel: vp,
            label_text: lt,
            value_text: vt,
            detail_text: dt,
        } = layout;
        let mut s = String::with_capacity(1024);
        // Writing to a String cannot fail.
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="{label}: {value}"><title>{label}: {value}</title>"#
        );
        let panels = [(lp, LABEL_FILL), (vp, self.tone.fill())];
        if *radius > 0 {
            // The badge's rounded corners and gloss (shields.io's flat
            // style). A card has neither: clipping it and blending a
            // gradient over 1200×630 would cost most of its drawing.
            let _ = write!(
                s,
                r##"<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient><clipPath id="r"><rect width="{width}" height="{height}" rx="{radius}" fill="#fff"/></clipPath><g clip-path="url(#r)">"##
            );
            rects(&mut s, &panels);
            let _ = write!(
                s,
                r#"<rect width="{width}" height="{height}" fill="url(#s)"/></g>"#
            );
        } else {
            rects(&mut s, &panels);
        }
        let _ = write!(s, r#"<g text-anchor="middle" font-family="{FONT_FAMILY}">"#);
        text(&mut s, lt, &label);
        text(&mut s, vt, &value);
        if let (Some(dt), Some(detail)) = (dt, &self.detail) {
            text(&mut s, dt, &escape(detail));
        }
        s.push_str("</g></svg>");
        s
    }
}

/// A rectangle, in whole pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rect {
    pub(crate) x: usize,
    pub(crate) y: usize,
    pub(crate) w: usize,
    pub(crate) h: usize,
}

/// Where one text of a drawing goes: centred on `x`, its baseline at `y`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TextAt {
    pub(crate) x: f32,
    pub(crate) y: f32,
    pub(crate) size: f32,
    pub(crate) fill: &'static str,
}

/// Where a drawing's panels and texts go.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// The corners' radius.
    pub(crate) radius: usize,
    pub(crate) label_panel: Rect,
    pub(crate) value_panel: Rect,
    pub(crate) label_text: TextAt,
    pub(crate) value_text: TextAt,
    /// The detail line, where the drawing has room for it.
    pub(crate) detail_text: Option<TextAt>,
}

impl Layout {
    /// The badge's: label and message side by side, 20 px high, each
    /// panel as wide as an estimate of its text at 11 px.
    pub(crate) fn badge(face: &Face) -> Self {
        let (lw, vw) = (width(&face.label), width(&face.message));
        let at = |x: usize| TextAt {
            // Whole pixels, as the badges always had.
            #[allow(clippy::cast_precision_loss)]
            x: (x) as f32,
            y: 14.0,
            size: 11.0,
            fill: "#fff",
        };
        Layout {
            width: lw + vw,
            height: 20,
            radius: 3,
            label_panel: Rect {
                x: 0,
                y: 0,
                w: lw,
                h: 20,
            },
            value_panel: Rect {
                x: lw,
                y: 0,
                w: vw,
                h: 20,
            },
            label_text: at(lw / 2),
            value_text: at(lw + vw / 2),
            detail_text: None,
        }
    }

    /// The card's: 1200×630, the label (a name at `label_size` px) and the
    /// detail on the grey panel above, the message (at `value_size` px)
    /// large on the face's colour below; the card chooses the sizes so
    /// that the texts fit. Dark text on
    /// the colour, which white on bright green or yellow would not be
    /// readable at a glance.
    pub(crate) fn card(label_size: f32, value_size: f32) -> Self {
        Layout {
            width: CARD_WIDTH,
            height: CARD_HEIGHT,
            radius: 0,
            label_panel: Rect {
                x: 0,
                y: 0,
                w: CARD_WIDTH,
                h: 400,
            },
            value_panel: Rect {
                x: 0,
                y: 400,
                w: CARD_WIDTH,
                h: CARD_HEIGHT - 400,
            },
            label_text: TextAt {
                x: 600.0,
                y: 215.0,
                size: label_size,
                fill: "#fff",
            },
            value_text: TextAt {
                x: 600.0,
                y: 550.0,
                size: value_size,
                fill: "#111",
            },
            detail_text: Some(TextAt {
                x: 600.0,
                y: 330.0,
                size: 48.0,
                fill: "#ddd",
            }),
        }
    }
}

/// A card's size, in pixels (Open Graph's large image).
pub(crate) const CARD_WIDTH: usize = 1200;
pub(crate) const CARD_HEIGHT: usize = 630;
/// The margin a card's texts keep from its left and right edges.
pub(crate) const CARD_MARGIN: usize = 60;

/// The panels of a drawing, each filled with its colour.
fn rects(s: &mut String, panels: &[(&Rect, &str)]) {
    for (r, fill) in panels {
        let _ = write!(
            s,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"/>"#,
            r.x, r.y, r.w, r.h
        );
    }
}

/// One `<text>` of a drawing (`escaped` already XML-escaped); isolated, so
/// a right-to-left name never reorders what is around it.
fn text(s: &mut String, at: &TextAt, escaped: &str) {
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" font-size="{}" fill="{}" unicode-bidi="isolate">{escaped}</text>"#,
        at.x, at.y, at.size, at.fill
    );
}

/// `text` cut to `max` characters (with an ellipsis when cut).
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// An estimate of a text's width in pixels at 11 px Verdana.
fn width(text: &str) -> usize {
    text.chars().count() * 7 + 10
}

#[cfg(test)]
mod tests {
    use super::*;

    fn face(name: &str) -> Face {
        Face {
            label: cut(name, NAME_CHARS),
            message: "2/4 open".into(),
            tone: Tone::Good,
            detail: Some("Standard A".into()),
        }
    }

    #[test]
    fn any_name_gives_well_formed_small_xml() {
        let names = [
            r#"<script>&"quotes" 'and' </svg>"#,
            "שרת עברי مرحبا",
            "\u{202E}reversed\u{202C} \u{1}ctl",
            &"W".repeat(100),
        ];
        for name in names {
            let face = face(name);
            let expected: String = cut(name, NAME_CHARS)
                .chars()
                .filter(|c| *c >= ' ')
                .collect();
            for (layout, shown) in [
                (Layout::badge(&face), vec![expected.as_str(), "2/4 open"]),
                (
                    Layout::card(64.0, 110.0),
                    vec![expected.as_str(), "2/4 open", "Standard A"],
                ),
            ] {
                let text = face.svg(&layout);
                assert!(text.len() <= 4096, "{} bytes", text.len());
                let doc =
                    roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
                let texts: Vec<&str> = doc
                    .descendants()
                    .filter(|n| n.has_tag_name("text"))
                    .filter_map(|n| n.text())
                    .collect();
                assert_eq!(texts, shown);
            }
        }
    }

    #[test]
    fn the_badge_has_no_detail_and_the_card_its_size() {
        let face = face("Alpha");
        let badge = face.svg(&Layout::badge(&face));
        assert!(!badge.contains("Standard A"), "{badge}");
        assert!(badge.contains(r#"height="20""#), "{badge}");
        let card = face.svg(&Layout::card(64.0, 110.0));
        assert!(card.contains(r#"width="1200" height="630""#), "{card}");
    }
}
