//! Cards (`docs/protocol.md` §2.6): `GET /card.png` (the lobby's servers
//! and players) and `GET /card/{key}.png` (one server: name, players/max,
//! lobby open or in game, or offline, and its gameplay mode), 1200×630
//! PNGs for link previews, readable at a glance.
//!
//! A card is the badge's drawing ([`crate::http::face`]) in the card's layout,
//! rasterized by `resvg` with the one font the bridge ships
//! (`bridge/fonts/`, compiled in; the renderer is given no other font and
//! never reads the system's). Characters the font lacks (CJK, colour
//! emoji) are drawn as its missing-glyph box. A name (and the message) is
//! drawn as large as fits between the card's margins, down to
//! [`MIN_TEXT_SIZE`], and cut with an ellipsis below that, measured by the renderer's own layout of
//! the text (shaping, right-to-left runs and fallback boxes included).
//!
//! Answers are served by the badges' handlers (`badge::server_in`, in
//! the card's form), cached like theirs (per list change and key, with
//! `ETag`, paid for from the client address's budget), and the PNG itself
//! per face: a list change that leaves a card's face as it was costs no
//! drawing ([`Rendered`]).

use std::{
    collections::HashMap,
    sync::{atomic::Ordering::Relaxed, Arc, Mutex, OnceLock},
};

use bytes::Bytes;
use resvg::{
    tiny_skia,
    usvg::{self, fontdb},
};

use crate::{
    http::{
        answers::Computed,
        error::HttpError,
        face::{cut, Face, Layout, CARD_HEIGHT, CARD_MARGIN, CARD_WIDTH},
    },
    metrics::Metrics,
};

/// The font every card is drawn with (see `bridge/fonts/README.md`).
const FONT: &[u8] = include_bytes!("../../fonts/DejaVuSans-Bold-card.ttf");
/// A name's and a message's largest size on a card, and the smallest
/// either is drawn at (cut with an ellipsis below that), in pixels.
const MAX_NAME_SIZE: f32 = 96.0;
const MAX_MESSAGE_SIZE: f32 = 110.0;
const MIN_TEXT_SIZE: f32 = 40.0;
/// Faces whose PNG is kept; the cache starts over when full (a PNG is
/// some tens of KiB).
const RENDERED: usize = 256;

/// The renderer's options: the shipped font only, and no image ever
/// loaded (a card's SVG has none; any `href` is refused all the same).
fn options() -> &'static usvg::Options<'static> {
    static OPTIONS: OnceLock<usvg::Options<'static>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        let family = db
            .faces()
            .next()
            .and_then(|f| f.families.first())
            .map_or_else(|| "DejaVu Sans".to_owned(), |(name, _)| name.clone());
        db.set_sans_serif_family(family.clone());
        usvg::Options {
            font_family: family,
            fontdb: Arc::new(db),
            image_href_resolver: usvg::ImageHrefResolver {
                resolve_data: Box::new(|_, _, _| None),
                resolve_string: Box::new(|_, _| None),
            },
            ..usvg::Options::default()
        }
    })
}

/// Why a card could not be drawn (never expected: the SVG is the bridge's
/// own).
#[derive(Debug, thiserror::Error)]
pub(crate) enum DrawError {
    #[error("the card's SVG does not parse: {0}")]
    Svg(#[from] usvg::Error),
    #[error("no pixmap for the card")]
    Pixmap,
    #[error("encoding the PNG: {0}")]
    Png(#[from] png::EncodingError),
}

/// How wide `text` is drawn at 100 px, by the renderer's own layout.
fn width_at_100(text: &str) -> Result<f32, DrawError> {
    let svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text id="t" x="0" y="100" font-size="100" unicode-bidi="isolate">{}</text></svg>"#,
        crate::http::markup::escape(text)
    );
    let tree = usvg::Tree::from_str(&svg, options())?;
    // No node: nothing drawable (every character dropped as not XML).
    Ok(tree
        .node_by_id("t")
        .map_or(0.0, |n| n.abs_bounding_box().width()))
}

/// `text` cut (if need be) and the size it is drawn at, at most `max`
/// px, so that it fits between the card's margins.
fn fit(text: &str, max: f32) -> Result<(String, f32), DrawError> {
    #[allow(clippy::cast_precision_loss)]
    let room = (CARD_WIDTH - 2 * CARD_MARGIN) as f32;
    let mut text = text.to_owned();
    let mut chars = text.chars().count();
    // Each round cuts the text in proportion to how far it overflows;
    // a few rounds settle it (shaping makes widths not quite additive).
    for _ in 0..8 {
        let w = width_at_100(&text)?;
        let size = if w <= 0.0 {
            max
        } else {
            (room * 100.0 / w).min(max)
        };
        if size >= MIN_TEXT_SIZE || chars <= 1 {
            return Ok((text, size.max(MIN_TEXT_SIZE)));
        }
        // Fits at MIN_TEXT_SIZE: chars × (the share that fits), less one
        // for the ellipsis.
        let share = size / MIN_TEXT_SIZE;
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let keep = ((chars as f32 * share) as usize).clamp(1, chars - 1);
        chars = keep;
        text = cut(&text, chars);
    }
    Ok((text, MIN_TEXT_SIZE))
}

/// `face` with its label and message fitted to the card, and the card's
/// layout for them.
fn fitted(face: &Face) -> Result<(Face, Layout), DrawError> {
    let (label, label_size) = fit(&face.label, MAX_NAME_SIZE)?;
    let (message, message_size) = fit(&face.message, MAX_MESSAGE_SIZE)?;
    let face = Face {
        label,
        message,
        ..face.clone()
    };
    Ok((face, Layout::card(label_size, message_size)))
}

/// `face`'s card: the SVG drawing and its PNG.
pub(crate) fn draw(face: &Face) -> Result<Vec<u8>, DrawError> {
    let (face, layout) = fitted(face)?;
    let svg = face.svg(&layout);
    let tree = usvg::Tree::from_str(&svg, options())?;
    #[allow(clippy::cast_possible_truncation)]
    let mut pixmap =
        tiny_skia::Pixmap::new(CARD_WIDTH as u32, CARD_HEIGHT as u32).ok_or(DrawError::Pixmap)?;
    resvg::render(
        &tree,
        tiny_skia::Transform::identity(),
        &mut pixmap.as_mut(),
    );
    encode(&pixmap)
}

/// The pixmap as a PNG, compressed fast: the flat panels compress well
/// anyway. A card is opaque, so its premultiplied pixels are its pixels.
fn encode(pixmap: &tiny_skia::Pixmap) -> Result<Vec<u8>, DrawError> {
    let mut out = Vec::with_capacity(64 * 1024);
    let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(pixmap.data())?;
    writer.finish()?;
    Ok(out)
}

/// PNGs drawn, by face: a card is drawn once per face it shows.
#[derive(Debug, Default)]
pub(crate) struct Rendered {
    cache: Mutex<HashMap<Face, Bytes>>,
}

impl Rendered {
    /// `face`'s card, drawn now or earlier.
    fn card(&self, face: &Face, metrics: &Metrics) -> Result<Bytes, DrawError> {
        if let Some(png) = self.lock().get(face) {
            return Ok(png.clone());
        }
        let png = Bytes::from(draw(face)?);
        metrics.cards_drawn.fetch_add(1, Relaxed);
        let mut cache = self.lock();
        if cache.len() >= RENDERED {
            cache.clear();
        }
        cache.insert(face.clone(), png.clone());
        Ok(png)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Face, Bytes>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The answer of `face`'s card.
    pub(crate) fn answer(&self, face: &Face, metrics: &Metrics) -> Computed {
        match self.card(face, metrics) {
            Ok(body) => Computed::ok_typed("image/png", body),
            Err(e) => {
                master::throttled!(error, error = %e, "drawing a card failed");
                Computed::refused(&HttpError::Internal)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::face::{Tone, NAME_CHARS};

    fn face(name: &str) -> Face {
        Face {
            label: cut(name, NAME_CHARS),
            message: "12/16 in game".into(),
            tone: Tone::Busy,
            detail: Some("Standard A+B".into()),
        }
    }

    #[test]
    fn every_kind_of_name_fits() {
        let room = (CARD_WIDTH - 2 * CARD_MARGIN) as f32;
        for name in [
            "Alpha",
            "שרת עברי مرحبا بكم في الخادم",
            "日本語のサーバー 中文服务器 한국어",
            "🎮🔥 emoji 👨‍👩‍👧 server ✨",
            &"W".repeat(100),
            &"i".repeat(100),
            "",
        ] {
            let mut face = face(name);
            face.message = "4294967295 servers, 18446744073709551615 players".into();
            let (fitted, layout) = fitted(&face).unwrap();
            for (text, size) in [
                (&fitted.label, layout.label_text.size),
                (&fitted.message, layout.value_text.size),
            ] {
                let w = width_at_100(text).unwrap() * size / 100.0;
                assert!(w <= room + 1.0, "{text:?}: {w} px at {size} px");
                assert!((MIN_TEXT_SIZE..=MAX_MESSAGE_SIZE).contains(&size), "{size}");
            }
        }
    }

    #[test]
    fn a_card_is_a_png_of_its_size() {
        let png = draw(&face("Alpha")).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let reader = decoder.read_info().unwrap();
        let info = reader.info();
        assert_eq!((info.width, info.height), (1200, 630));
    }
}
