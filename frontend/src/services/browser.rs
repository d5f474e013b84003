//! Small browser APIs behind plain functions: clocks, randomness, the
//! bridge URL, the clipboard and the page theme.

use wasm_bindgen::JsValue;

use crate::{bridge_choice, query::ListQuery, services::storage};

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

/// The WebSocket URL of the bridge that served this page (`/ws` on its
/// origin): the only place the admin token is ever sent.
pub fn own_bridge_url() -> String {
    let Some(location) = web_sys::window().map(|w| w.location()) else {
        return "ws://127.0.0.1/ws".to_owned();
    };
    let host = location.host().unwrap_or_else(|_| "127.0.0.1".to_owned());
    bridge_choice::own_bridge(&location.protocol().unwrap_or_default(), &host)
}

/// The bridge the list comes from: `?bridge=` when the operator allows that
/// address (see [`bridge_choice::choose`]), otherwise [`own_bridge_url`].
pub fn bridge_url() -> String {
    let own = own_bridge_url();
    let Some(window) = web_sys::window() else {
        return own;
    };
    let location = window.location();
    let query = ListQuery::from_query_str(&location.search().unwrap_or_default());
    let allowed = window
        .document()
        .and_then(|d| d.query_selector("meta[name=lobby-bridges]").ok().flatten())
        .and_then(|m| m.get_attribute("content"))
        .unwrap_or_default();
    let host = location.host().unwrap_or_default();
    bridge_choice::choose(query.bridge.as_deref(), &own, &host, &allowed)
}

/// The Join links' template, which the bridge that served the page writes
/// into it (`<meta name="lobby-join-url">`, only while it shows
/// addresses), checked by the protocol's rule; read once per page load.
pub fn join_template() -> Option<protocol::join::JoinTemplate> {
    thread_local! {
        static TEMPLATE: std::cell::OnceCell<Option<protocol::join::JoinTemplate>> =
            const { std::cell::OnceCell::new() };
    }
    TEMPLATE.with(|cell| {
        cell.get_or_init(|| {
            let text = web_sys::window()?
                .document()?
                .query_selector("meta[name=lobby-join-url]")
                .ok()??
                .get_attribute("content")?;
            protocol::join::JoinTemplate::parse(&text).ok()
        })
        .clone()
    })
}

/// Whether the page's connection goes to the bridge that served the page,
/// so it may carry the admin token.
pub fn bridge_is_own() -> bool {
    bridge_url() == own_bridge_url()
}

/// Keeps a sign-in link's token (`/admin#token=…`, which the bridge prints)
/// for this tab and removes it from the address bar and history at once.
pub fn take_fragment_token() {
    let Some(location) = web_sys::window().map(|w| w.location()) else {
        return;
    };
    let hash = location.hash().unwrap_or_default();
    let Some(raw) = bridge_choice::fragment_token(&hash) else {
        return;
    };
    if let Some(token) = js_sys::decode_uri_component(raw)
        .ok()
        .and_then(|t| t.as_string())
    {
        if !token.is_empty() {
            storage::set_token(&token);
        }
    }
    let path = location.pathname().unwrap_or_default();
    let search = location.search().unwrap_or_default();
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let url = format!("{path}{search}");
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
}

/// Where the first snapshot comes from: `/api/servers` on this page's
/// origin. `None` when the socket goes to another bridge (an allowed
/// `?bridge=`): that socket then sends the snapshot itself.
pub fn api_url() -> Option<String> {
    let location = web_sys::window()?.location();
    if !bridge_is_own() {
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

/// Runs `start` once the page as the HTML drew it has been shown: when
/// the browser has reported its first contentful paint (looked for every
/// animation frame), or after a second if it does not (a window the browser
/// does not draw), or at once in a hidden tab. A browser counts the page's
/// largest paint only from content it has reported painted, so the static
/// first screen of `index.html`, replaced before that, would not count.
pub fn after_first_paint(start: impl FnOnce() + 'static) {
    use std::{
        cell::{Cell, RefCell},
        rc::Rc,
    };
    use wasm_bindgen::{closure::Closure, JsCast};
    /// The start, until it runs.
    type Pending = Rc<Cell<Option<Box<dyn FnOnce()>>>>;
    /// The closure each frame calls.
    type Frame = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;
    let Some(window) = web_sys::window().filter(|_| !tab_hidden()) else {
        start();
        return;
    };
    let pending: Pending = Rc::new(Cell::new(Some(Box::new(start))));
    let run = {
        let pending = pending.clone();
        move || {
            if let Some(start) = pending.take() {
                start();
            }
        }
    };
    let fallback = Closure::once_into_js(run.clone());
    let _ = window
        .set_timeout_with_callback_and_timeout_and_arguments_0(fallback.unchecked_ref(), 1000);
    // One closure, asked again each frame until the paint is reported or
    // the fallback ran; kept for the page's life (a few bytes).
    let frame: Frame = Rc::default();
    let next = frame.clone();
    let w = window.clone();
    *frame.borrow_mut() = Some(Closure::new(move || {
        let started = {
            let left = pending.take();
            let started = left.is_none();
            pending.set(left);
            started
        };
        if started || first_contentful_paint(&w) {
            run();
        } else if let Some(f) = next.borrow().as_ref() {
            let _ = w.request_animation_frame(f.as_ref().unchecked_ref());
        }
    }));
    if let Some(f) = frame.borrow().as_ref() {
        let _ = window.request_animation_frame(f.as_ref().unchecked_ref());
    };
}

/// Whether the browser has reported the page's first contentful paint.
fn first_contentful_paint(window: &web_sys::Window) -> bool {
    window.performance().is_some_and(|p| {
        p.get_entries_by_type("paint").iter().any(|e| {
            js_sys::Reflect::get(&e, &JsValue::from_str("name"))
                .ok()
                .and_then(|n| n.as_string())
                .is_some_and(|n| n == "first-contentful-paint")
        })
    })
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

/// How [`local_time`] writes a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeStyle {
    /// `14:00`.
    Time,
    /// `5 Mar` / `5. März`.
    Date,
    /// `5 Mar, 14:00`.
    DateTime,
    /// `5 Mar 2025, 14:00`.
    Full,
}

/// Unix ms `ms` on the browser's clock, in the page's language (the
/// browser's `Intl`, so no date library ships in the bundle).
pub fn local_time(ms: f64, style: TimeStyle) -> String {
    use js_sys::{Object, Reflect};
    let opts = Object::new();
    let set = |k: &str, v: &str| {
        let _ = Reflect::set(&opts, &JsValue::from_str(k), &JsValue::from_str(v));
    };
    if style != TimeStyle::Time {
        set("day", "numeric");
        set("month", "short");
    }
    if style == TimeStyle::Full {
        set("year", "numeric");
    }
    if style != TimeStyle::Date {
        set("hour", "2-digit");
        set("minute", "2-digit");
    }
    let date = js_sys::Date::new(&JsValue::from_f64(ms));
    date.to_locale_string(crate::i18n::lang().code(), &opts)
        .as_string()
        .unwrap_or_default()
}

/// How far the browser's clock is ahead of UTC at Unix ms `ms`, in ms:
/// the graphs label local midnights and whole hours.
pub fn utc_offset_ms(ms: f64) -> f64 {
    -js_sys::Date::new(&JsValue::from_f64(ms)).get_timezone_offset() * 60_000.0
}

/// Whether the tab is in the background (refreshes wait then).
pub fn tab_hidden() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden())
}

/// `window.location.origin` (`https://lobby.example.org`), for absolute
/// links in the snippets a site copies.
pub fn origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}
