//! Render timing for benchmarks, kept apart from the product's state: the
//! connection notes when each lobby list message arrived and how long
//! reading it took ([`received`]), and the lobby's list notes when the rows
//! of a new list version are all drawn ([`use_render_timing`]). Together they
//! fill `window.__lobbyMetrics`, with the server page's first render
//! ([`server_page_rendered`]), which the page benchmark
//! (`bench/src/phases/page.rs`) and the end-to-end tests read. Nothing in
//! the page reads it back.
//!
//! The tab's own notices are noted apart, in `window.__lobbyNotices`
//! ([`notices_looked`], [`notice_started`], [`notice_settled`]), so the
//! end-to-end tests wait on what the page did instead of on a clock.

use std::cell::Cell;

use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};
use yew::prelude::*;

use super::browser;

/// What the last list message was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole list without ids.
    List,
    /// The whole list with the bridge's ids.
    Snapshot,
    /// What changed since the list before.
    Delta,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::List => "list",
            Kind::Snapshot => "snapshot",
            Kind::Delta => "delta",
        }
    }
}

/// The last list message that reached the page.
#[derive(Debug, Clone, Copy)]
struct Received {
    /// `performance.now()` when its frame or response arrived.
    perf_ms: f64,
    /// How long reading it took.
    parse_ms: f64,
    kind: Kind,
}

thread_local! {
    /// One slot: only the latest message is timed.
    static LAST: Cell<Option<Received>> = const { Cell::new(None) };
}

/// Notes a list message handed to the page: arrived at `perf_ms`
/// (`performance.now()`), read in `parse_ms`.
pub fn received(perf_ms: f64, parse_ms: f64, kind: Kind) {
    LAST.with(|l| {
        l.set(Some(Received {
            perf_ms,
            parse_ms,
            kind,
        }))
    });
}

/// Records the timing of list `version` (of `list_size` rows) once it is
/// drawn whole (`drawn`: a long list's rows are drawn a few at a time);
/// version 0 (no list yet) is not recorded.
#[hook]
pub fn use_render_timing(version: u32, list_size: usize, drawn: bool) {
    use_effect_with((version, drawn), move |&(v, drawn)| {
        if v > 0 && drawn {
            record(list_size);
        }
    });
}

/// Writes `window.__lobbyMetrics`: `lastListSize`, `firstFullRenderMs`
/// (first non-empty list) and `lastUpdateMs`, each from receiving the list
/// (a frame, or the `/api/servers` response) to the rendered DOM;
/// `lastParseMs`, the part of it spent parsing; and `lastKind`, what the
/// update was (`list`, `snapshot`, `delta`). Every call replaces the
/// object, so a reader can mark the old one to see a new one come.
fn record(list_size: usize) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let last = LAST.with(Cell::get);
    let elapsed = last.map_or(f64::NAN, |r| browser::perf_now() - r.perf_ms);
    let key = JsValue::from_str("__lobbyMetrics");
    let existing = Reflect::get(&window, &key)
        .ok()
        .filter(|v| v.is_object())
        .unwrap_or_else(|| js_sys::Object::new().into());
    let first = Reflect::get(&existing, &JsValue::from_str("firstFullRenderMs"))
        .ok()
        .filter(|v| v.as_f64().is_some());
    let metrics = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = Reflect::set(&metrics, &JsValue::from_str(k), &v);
    };
    set("lastListSize", JsValue::from_f64(list_size as f64));
    set("lastUpdateMs", JsValue::from_f64(elapsed));
    set(
        "lastParseMs",
        JsValue::from_f64(last.map_or(f64::NAN, |r| r.parse_ms)),
    );
    if let Some(r) = last {
        set("lastKind", JsValue::from_str(r.kind.as_str()));
    }
    // The server page's figure outlives the list's updates.
    if let Ok(v) = Reflect::get(&existing, &JsValue::from_str(SERVER_PAGE)) {
        if v.as_f64().is_some() {
            set(SERVER_PAGE, v);
        }
    }
    match first {
        Some(v) => set("firstFullRenderMs", v),
        None if list_size > 0 => set("firstFullRenderMs", JsValue::from_f64(elapsed)),
        None => set("firstFullRenderMs", JsValue::NULL),
    }
    let _ = Reflect::set(&window, &key, &metrics);
}

/// The key of the server page's figure in `window.__lobbyMetrics`.
const SERVER_PAGE: &str = "serverPageRenderMs";

/// Notes `serverPageRenderMs`: how long the server page took from its
/// record's arrival (`/api/servers/{key}`) to the drawn details, once per
/// visit of the page. Adds it to `window.__lobbyMetrics` (making the
/// object when the list has not yet).
pub fn server_page_rendered(ms: f64) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let key = JsValue::from_str("__lobbyMetrics");
    let metrics = Reflect::get(&window, &key)
        .ok()
        .filter(|v| v.is_object())
        .unwrap_or_else(|| {
            let fresh: JsValue = js_sys::Object::new().into();
            let _ = Reflect::set(&window, &key, &fresh);
            fresh
        });
    let _ = Reflect::set(
        &metrics,
        &JsValue::from_str(SERVER_PAGE),
        &JsValue::from_f64(ms),
    );
}

/// The key of the tab's notices in `window`: `{looked, pending, settled}`.
const NOTICES: &str = "__lobbyNotices";

/// `window.__lobbyNotices`, made on first use.
fn notices() -> Option<JsValue> {
    let window = web_sys::window()?;
    let key = JsValue::from_str(NOTICES);
    let existing = Reflect::get(&window, &key).ok().filter(|v| v.is_object());
    Some(existing.unwrap_or_else(|| {
        let fresh = js_sys::Object::new();
        let _ = Reflect::set(&fresh, &"looked".into(), &JsValue::from_f64(0.0));
        let _ = Reflect::set(&fresh, &"pending".into(), &JsValue::from_f64(0.0));
        let _ = Reflect::set(&fresh, &"settled".into(), &js_sys::Array::new());
        let _ = Reflect::set(&window, &key, &fresh);
        fresh.into()
    }))
}

/// Adds `by` to the number under `field` of the notices' record.
fn add(field: &str, by: f64) {
    if let Some(n) = notices() {
        let now = Reflect::get(&n, &field.into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0);
        let _ = Reflect::set(&n, &field.into(), &JsValue::from_f64(now + by));
    }
}

/// Notes that the tab decided its watches' events for list `version`
/// (`looked`).
pub fn notices_looked(version: u32) {
    if let Some(n) = notices() {
        let _ = Reflect::set(&n, &"looked".into(), &JsValue::from_f64(version.into()));
    }
}

/// Notes a notice on its way to being shown (`pending` up by one).
pub fn notice_started() {
    add("pending", 1.0);
}

/// Notes a notice shown, as a notification or a toast: its tag joins
/// `settled` and `pending` goes down by one.
pub fn notice_settled(tag: &str) {
    if let Some(n) = notices() {
        if let Ok(list) = Reflect::get(&n, &"settled".into()) {
            if let Some(list) = list.dyn_ref::<js_sys::Array>() {
                list.push(&JsValue::from_str(tag));
            }
        }
    }
    add("pending", -1.0);
}
