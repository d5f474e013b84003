//! Reading the bridge's JSON answers over HTTP (`/api/servers/{key}`, the
//! histories) into the protocol's answer types: relative URLs, so always
//! the bridge that served the page.
//! The browser keeps each answer with its `ETag` and revalidates it
//! (`Cache-Control: no-cache`), so a refresh that finds nothing new is a
//! `304` that costs the bridge no body.

use std::rc::Rc;

use serde::de::DeserializeOwned;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// What a request gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    /// The body of a `200`.
    Ok(Rc<str>),
    /// `404`: the bridge does not know what the path names.
    Missing,
    /// Anything else: no network, another status.
    Failed,
}

/// `GET path`, its body as text. One function for every answer (the
/// callers read the text): generic code would be copied into the bundle
/// once per type.
pub async fn get_text(path: &str) -> Fetched {
    let Some(window) = web_sys::window() else {
        return Fetched::Failed;
    };
    let Ok(response) = JsFuture::from(window.fetch_with_str(path)).await else {
        return Fetched::Failed;
    };
    let response: web_sys::Response = response.unchecked_into();
    if response.status() == 404 {
        return Fetched::Missing;
    }
    if !response.ok() {
        return Fetched::Failed;
    }
    let text = match response.text() {
        Ok(promise) => JsFuture::from(promise)
            .await
            .ok()
            .and_then(|v| v.as_string()),
        Err(_) => None,
    };
    text.map_or(Fetched::Failed, |t| Fetched::Ok(t.into()))
}

/// `METHOD path` with a JSON `body`; the answer's status (0: no answer).
/// The body of the answer is not read: the callers need only the verdict.
pub async fn send_json(method: &str, path: &str, body: &str) -> u16 {
    let Some(window) = web_sys::window() else {
        return 0;
    };
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    init.set_body_opt_str(Some(body));
    let headers = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&headers, &"content-type".into(), &"application/json".into());
    init.set_headers(&headers);
    match JsFuture::from(window.fetch_with_str_and_init(path, &init)).await {
        Ok(response) => response.unchecked_into::<web_sys::Response>().status(),
        Err(_) => 0,
    }
}

/// An answer's text read as `T`, one of the protocol's answer types
/// (`protocol::entry::ServerDetails`, `protocol::api::ServerHistory`, …):
/// the types the bridge writes them with. `None` for a text that is not
/// such an answer (an error body, a truncated answer).
pub fn read_answer<T: DeserializeOwned>(text: &str) -> Option<T> {
    serde_json::from_str(text).ok()
}
