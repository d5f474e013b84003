//! Reading the bridge's JSON answers over HTTP (`/api/servers/{key}`, the
//! histories): relative URLs, so always the bridge that served the page.
//! The browser keeps each answer with its `ETag` and revalidates it
//! (`Cache-Control: no-cache`), so a refresh that finds nothing new is a
//! `304` that costs the bridge no body.

use serde::de::DeserializeOwned;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// What a request gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched<T> {
    Ok(T),
    /// `404`: the bridge does not know what the path names.
    Missing,
    /// Anything else: no network, another status, a body that does not
    /// read as `T`.
    Failed,
}

/// `GET path` read as JSON `T`.
pub async fn get_json<T: DeserializeOwned>(path: &str) -> Fetched<T> {
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
    let Some(text) = (match response.text() {
        Ok(promise) => JsFuture::from(promise).await.ok().and_then(|v| v.as_string()),
        Err(_) => None,
    }) else {
        return Fetched::Failed;
    };
    match serde_json::from_str(&text) {
        Ok(v) => Fetched::Ok(v),
        Err(_) => Fetched::Failed,
    }
}
