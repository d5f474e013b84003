//! Reading the bridge's JSON answers over HTTP (`/api/servers/{key}`, the
//! histories): relative URLs, so always the bridge that served the page.
//! The browser keeps each answer with its `ETag` and revalidates it
//! (`Cache-Control: no-cache`), so a refresh that finds nothing new is a
//! `304` that costs the bridge no body.

use std::rc::Rc;

use protocol::{GameplayMode, Players};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::history::ServerInfo;

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

fn get(v: &JsValue, k: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
}

/// A `/api/servers/{key}` answer; `None` if it is not one. Read with the
/// browser's `JSON.parse`, like [`read_points`].
pub fn read_info(text: &str) -> Option<ServerInfo> {
    let v = js_sys::JSON::parse(text).ok()?;
    let players = get(&v, "players");
    let small = |v: JsValue| v.as_f64().filter(|n| n.fract() == 0.0 && *n >= 0.0);
    Some(ServerInfo {
        name: get(&v, "name").as_string()?,
        address: get(&v, "address").as_string(),
        port: small(get(&v, "port")).and_then(|p| u16::try_from(p as u32).ok()),
        online: get(&v, "online").as_bool()?,
        players: Players {
            current: small(get(&players, "current"))? as u32,
            max: u8::try_from(small(get(&players, "max"))? as u32).ok()?,
        },
        is_lobby_open: get(&v, "isLobbyOpen").as_bool()?,
        gameplay_mode: GameplayMode::from_wire(small(get(&v, "gameplayMode"))? as u64).ok()?,
        first_seen: get(&v, "firstSeen").as_f64()?,
        last_seen: get(&v, "lastSeen").as_f64()?,
    })
}

/// A history answer's `step` and `points` (`{"step":S,"points":[[…],…]}`),
/// every point's numbers with `null` as `None`. Read with the browser's
/// `JSON.parse`: serde's floats would add kilobytes to the bundle.
pub fn read_points(text: &str) -> Option<(f64, Vec<Vec<Option<f64>>>)> {
    let v = js_sys::JSON::parse(text).ok()?;
    let step = get(&v, "step").as_f64()?;
    let points = get(&v, "points").dyn_into::<js_sys::Array>().ok()?;
    let rows = points
        .iter()
        .filter_map(|p| p.dyn_into::<js_sys::Array>().ok())
        .map(|p| p.iter().map(|x| x.as_f64()).collect())
        .collect();
    Some((step, rows))
}
