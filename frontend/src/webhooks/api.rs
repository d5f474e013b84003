//! The admin's webhook API from the page: relative URLs (so always the
//! bridge that served the page, the only one the admin token is sent to),
//! the token as `Authorization: Bearer`, and every answer read into the
//! protocol's types (`protocol::webhook`, `protocol::api::ApiError`).

use protocol::{
    api::ApiError,
    push::PushStatus,
    watch::{CardPreviewRequest, ServerFilter, WebhookSpec},
    webhook::{Delivery, DiscordCard, Webhook, WebhookList},
};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::{
    i18n::{t, tf, K},
    services::storage,
};

/// Where the admin's webhooks are.
const BASE: &str = "/api/admin/webhooks";

/// Why a request did not give its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiFailure {
    /// The bridge refused it and said why (`field`: the request's field
    /// at fault, for a 400).
    Said(ApiError),
    /// No answer, or one that is not the protocol's (no network, a proxy's
    /// page).
    Failed,
}

impl ApiFailure {
    /// What the page says of it, in the page's language.
    pub(crate) fn words(&self) -> String {
        match self {
            ApiFailure::Said(e) => tf(K::BridgeSays, &[&e.error]),
            ApiFailure::Failed => t(K::WebhooksUnreachable).to_owned(),
        }
    }
}

/// One request: the status and body text of the answer.
async fn send(method: &str, path: &str, body: Option<String>) -> Result<(u16, String), ApiFailure> {
    let window = web_sys::window().ok_or(ApiFailure::Failed)?;
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    let headers = web_sys::Headers::new().map_err(|_| ApiFailure::Failed)?;
    if let Some(token) = storage::token() {
        headers
            .set("Authorization", &format!("Bearer {token}"))
            .map_err(|_| ApiFailure::Failed)?;
    }
    if let Some(body) = &body {
        headers
            .set("Content-Type", "application/json")
            .map_err(|_| ApiFailure::Failed)?;
        init.set_body(&wasm_bindgen::JsValue::from_str(body));
    }
    init.set_headers(&headers);
    let response = JsFuture::from(window.fetch_with_str_and_init(path, &init))
        .await
        .map_err(|_| ApiFailure::Failed)?;
    let response: web_sys::Response = response.unchecked_into();
    let text = match response.text() {
        Ok(promise) => JsFuture::from(promise)
            .await
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default(),
        Err(_) => String::new(),
    };
    Ok((response.status(), text))
}

/// `T` from a 2xx answer's text; the bridge's error otherwise.
fn read<T: serde::de::DeserializeOwned>(answer: (u16, String)) -> Result<T, ApiFailure> {
    let (status, text) = answer;
    if (200..300).contains(&status) {
        return serde_json::from_str(&text).map_err(|_| ApiFailure::Failed);
    }
    Err(serde_json::from_str::<ApiError>(&text).map_or(ApiFailure::Failed, ApiFailure::Said))
}

/// Every webhook, with its state and last deliveries.
pub async fn list() -> Result<Vec<Webhook>, ApiFailure> {
    read::<WebhookList>(send("GET", BASE, None).await?).map(|l| l.webhooks)
}

/// Creates one; the answer holds its secret, the one time it is shown.
pub async fn create(spec: &WebhookSpec) -> Result<Webhook, ApiFailure> {
    let body = protocol::json::to_string(spec);
    read(send("POST", BASE, Some(body)).await?)
}

/// Enables or disables one.
pub async fn set_enabled(id: &str, enabled: bool) -> Result<Webhook, ApiFailure> {
    let body = protocol::json::to_string(&protocol::watch::WebhookPatch { enabled });
    read(send("PATCH", &format!("{BASE}/{id}"), Some(body)).await?)
}

/// Removes one.
pub async fn delete(id: &str) -> Result<(), ApiFailure> {
    let (status, text) = send("DELETE", &format!("{BASE}/{id}"), None).await?;
    if status == 204 {
        return Ok(());
    }
    Err(serde_json::from_str::<ApiError>(&text).map_or(ApiFailure::Failed, ApiFailure::Said))
}

/// Sends one test notification now; its outcome.
pub async fn test(id: &str) -> Result<Delivery, ApiFailure> {
    read(send("POST", &format!("{BASE}/{id}/test"), None).await?)
}

/// The message a status card of `servers` would post now (nothing is
/// sent).
pub async fn card_preview(servers: &ServerFilter) -> Result<DiscordCard, ApiFailure> {
    let body = protocol::json::to_string(&CardPreviewRequest {
        servers: servers.clone(),
    });
    read(send("POST", &format!("{BASE}/preview"), Some(body)).await?)
}

/// Web Push's state: whether it runs (why not), the subscriptions per
/// source.
pub async fn push_status() -> Result<PushStatus, ApiFailure> {
    read(send("GET", "/api/admin/push", None).await?)
}

/// Deletes every push subscription made from `source`.
pub async fn purge_push_source(source: &str) -> Result<(), ApiFailure> {
    let path = format!("/api/admin/push/sources/{source}");
    let (status, text) = send("DELETE", &path, None).await?;
    if status == 204 {
        return Ok(());
    }
    Err(serde_json::from_str::<ApiError>(&text).map_or(ApiFailure::Failed, ApiFailure::Said))
}
