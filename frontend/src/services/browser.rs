//! Small browser APIs behind plain functions: clocks, randomness, the
//! bridge URL, the clipboard, the page theme and render metrics.

use js_sys::Reflect;
use wasm_bindgen::JsValue;

use crate::query::ListQuery;

/// Wall-clock milliseconds (`Date.now()`).
pub fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// High-resolution milliseconds since page load (`performance.now()`).
pub fn perf_now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or_else(now_ms, |p| p.now())
}

/// A number in [0, 1).
pub fn random() -> f64 {
    js_sys::Math::random()
}

/// The bridge's WebSocket URL: the `bridge` query parameter if given (for
/// development), otherwise `/ws` on this page's origin.
pub fn bridge_url() -> String {
    let Some(location) = web_sys::window().map(|w| w.location()) else {
        return "ws://127.0.0.1/ws".to_owned();
    };
    let query = ListQuery::from_query_str(&location.search().unwrap_or_default());
    if let Some(url) = query.bridge {
        return url;
    }
    let scheme = match location.protocol().as_deref() {
        Ok("https:") => "wss",
        _ => "ws",
    };
    let host = location.host().unwrap_or_else(|_| "127.0.0.1".to_owned());
    format!("{scheme}://{host}/ws")
}

/// Where the first snapshot comes from: `/api/servers` on this page's
/// origin. `None` when the `bridge` query parameter points the socket
/// elsewhere (development): that socket then sends the snapshot itself.
pub fn api_url() -> Option<String> {
    let location = web_sys::window()?.location();
    let query = ListQuery::from_query_str(&location.search().unwrap_or_default());
    if query.bridge.is_some() {
        return None;
    }
    Some(format!("{}/api/servers", location.origin().ok()?))
}

/// The page's path (`/`, `/admin`, `/embed`, ...).
pub fn path() -> String {
    web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .unwrap_or_default()
}

/// Copies text; the result is not awaited (the button says "Copied" anyway,
/// and browsers without the API simply do nothing).
pub fn copy_to_clipboard(text: &str) {
    if let Some(w) = web_sys::window() {
        let _promise = w.navigator().clipboard().write_text(text);
    }
}

/// Sets `data-theme` on `<html>` (`None` removes it: follow the system).
pub fn set_theme(theme: Option<&str>) {
    let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    else {
        return;
    };
    let _ = match theme {
        Some(t) => root.set_attribute("data-theme", t),
        None => root.remove_attribute("data-theme"),
    };
}

/// What one list update cost the page, for `window.__lobbyMetrics`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderTiming {
    /// Entries in the list after the update.
    pub list_size: usize,
    /// `performance.now()` when the frame or response arrived.
    pub received_perf_ms: f64,
    /// How long reading it took.
    pub parse_ms: f64,
    /// `list` (a whole list), `snapshot` or `delta`.
    pub kind: &'static str,
}

/// Records render timing in `window.__lobbyMetrics` for benchmarks:
/// `lastListSize`, `firstFullRenderMs` (first non-empty list) and
/// `lastUpdateMs`, each from receiving the list (a frame, or the
/// `/api/servers` response) to the rendered DOM; `lastParseMs`, the part of
/// it spent parsing; and `lastKind`, what the update was (`list`,
/// `snapshot`, `delta`).
pub fn record_render(t: RenderTiming) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let elapsed = perf_now() - t.received_perf_ms;
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
    set("lastListSize", JsValue::from_f64(t.list_size as f64));
    set("lastUpdateMs", JsValue::from_f64(elapsed));
    set("lastParseMs", JsValue::from_f64(t.parse_ms));
    set("lastKind", JsValue::from_str(t.kind));
    match first {
        Some(v) => set("firstFullRenderMs", v),
        None if t.list_size > 0 => set("firstFullRenderMs", JsValue::from_f64(elapsed)),
        None => set("firstFullRenderMs", JsValue::NULL),
    }
    let _ = Reflect::set(&window, &key, &metrics);
}

/// The browser's preferred languages, most wanted first.
pub fn languages() -> Vec<String> {
    let Some(nav) = web_sys::window().map(|w| w.navigator()) else {
        return Vec::new();
    };
    let mut out: Vec<String> = nav
        .languages()
        .iter()
        .filter_map(|v| v.as_string())
        .collect();
    if out.is_empty() {
        out.extend(nav.language());
    }
    out
}

/// Sets `lang` on `<html>`, for screen readers and hyphenation.
pub fn set_document_lang(code: &str) {
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("lang", code);
    }
}

/// Removes the static "Loading the server list…" placeholder of
/// `index.html` once the app renders its own page.
pub fn remove_boot_placeholder() {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("boot"))
    {
        el.remove();
    }
}
