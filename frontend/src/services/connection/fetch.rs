//! The first snapshot over HTTP: `GET /api/servers` answers the same list a
//! `bridgeSnapshot` carries, compressed (the browser decompresses it), so a
//! first load moves a fraction of the list's bytes.

use protocol::{
    bridge::names,
    delta::{DeltaMessage, Snapshot},
};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::services::browser;

/// A fetched snapshot, timed like a frame.
pub(super) struct Fetched {
    pub snapshot: Snapshot,
    /// `performance.now()` when the body had arrived.
    pub perf_ms: f64,
    pub parse_ms: f64,
}

/// `None` on any failure (no such route on an older bridge, no list yet,
/// a network error, a body that is not a snapshot): the socket then sends
/// the snapshot instead.
pub(super) async fn snapshot(url: &str) -> Option<Fetched> {
    let window = web_sys::window()?;
    let response = JsFuture::from(window.fetch_with_str(url)).await.ok()?;
    // `fetch` resolves to a Response. Any status is read: an error's body
    // (503 before the bridge has a list, 404 on an older bridge's index
    // page) is not a snapshot, which is the same failure.
    let response: web_sys::Response = response.unchecked_into();
    let text = JsFuture::from(response.text().ok()?)
        .await
        .ok()?
        .as_string()?;
    let perf_ms = browser::perf_now();
    // Read as the content of a `bridgeSnapshot` frame: one reader for both
    // keeps the bundle smaller than a copy of the text costs.
    let frame = format!(r#"{{"content":{text}}}"#);
    let snapshot = match DeltaMessage::from_frame(names::SNAPSHOT, &frame)? {
        Ok(DeltaMessage::Snapshot(s)) => s,
        _ => return None,
    };
    Some(Fetched {
        snapshot,
        perf_ms,
        parse_ms: browser::perf_now() - perf_ms,
    })
}
