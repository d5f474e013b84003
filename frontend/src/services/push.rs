//! The browser's notification, service-worker and push APIs behind plain
//! functions (`docs/protocol.md` §2.4): registering the page's service
//! worker, asking for permission, subscribing with the bridge's VAPID key,
//! sending the watches, and showing an event the tab decided itself under
//! the same tag the service worker gives a push, so one event shows once.
//! Each API is looked up before use: a browser without it (or a page not
//! in a secure context) simply has none of this.

use js_sys::{Promise, Reflect, JSON};
use protocol::push::PushKey;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Notification, NotificationOptions, NotificationPermission, PushManager, PushSubscription,
    PushSubscriptionOptionsInit, ServiceWorkerContainer, ServiceWorkerRegistration,
};

use crate::{notify::watches::unsubscribe_body, services::api};

/// The service worker, at the site's root so its scope is every page.
const WORKER: &str = "/sw.js";

/// Whether the player allows notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Granted,
    Denied,
    /// Not asked yet.
    Ask,
    /// No notifications in this browser (or this context).
    Unsupported,
}

/// Why push could not be turned on; the tab then notifies by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushError {
    /// No service worker or push in this browser.
    Unsupported,
    /// The bridge gave no key now, or an answer not readable.
    NoKey,
    /// The bridge's Web Push is off (it has no contact for the push
    /// services): `/api/push/key` answered 503 without `Retry-After`.
    Off,
    /// The browser's push service refused or could not be reached.
    Subscribe,
    /// The bridge refused the watches (its status), or could not be reached (0).
    Bridge(u16),
}

fn has(target: &JsValue, name: &str) -> bool {
    Reflect::has(target, &JsValue::from_str(name)).unwrap_or(false)
}

fn container() -> Option<ServiceWorkerContainer> {
    let navigator = web_sys::window()?.navigator();
    has(&navigator, "serviceWorker").then(|| navigator.service_worker())
}

/// The page's permission for notifications, without asking.
pub fn permission() -> Permission {
    let Some(window) = web_sys::window() else {
        return Permission::Unsupported;
    };
    if !has(&window, "Notification") {
        return Permission::Unsupported;
    }
    match Notification::permission() {
        NotificationPermission::Granted => Permission::Granted,
        NotificationPermission::Denied => Permission::Denied,
        _ => Permission::Ask,
    }
}

/// Asks the player, which a browser allows only while handling their
/// click: call it in the click handler itself, then await the answer
/// with [`answer`].
pub fn ask() -> Option<Promise> {
    (permission() != Permission::Unsupported)
        .then(Notification::request_permission)
        .and_then(Result::ok)
}

/// The player's answer to [`ask`].
pub async fn answer(asked: Option<Promise>) -> Permission {
    if let Some(p) = asked {
        let _ = JsFuture::from(p).await;
    }
    permission()
}

/// Registers the service worker (when the page loads, so a subscription
/// made later uses it), handing it the sentences it shows, `words` (JSON),
/// in its address: a new language is a new address, which the browser
/// installs as the worker's next version (the subscription stays).
pub fn register_worker(words: &str) {
    let Some(c) = container() else {
        return;
    };
    let url = format!(
        "{WORKER}?words={}",
        String::from(js_sys::encode_uri_component(words))
    );
    // A rejection (no secure context, file missing) leaves the tab's own
    // notices, which need no worker.
    let _ = c.register(&url);
}

/// The worker's registration once it is active; `None` at once when the
/// worker was never registered (its registration failed), where waiting
/// for it to be ready would wait for ever.
async fn ready() -> Option<ServiceWorkerRegistration> {
    let c = container()?;
    let found = JsFuture::from(c.get_registration()).await.ok()?;
    if found.is_undefined() || found.is_null() {
        return None;
    }
    let ready = c.ready().ok()?;
    JsFuture::from(ready).await.ok().map(JsCast::unchecked_into)
}

async fn push_manager() -> Result<PushManager, PushError> {
    let window = web_sys::window().ok_or(PushError::Unsupported)?;
    if !has(&window, "PushManager") {
        return Err(PushError::Unsupported);
    }
    ready()
        .await
        .ok_or(PushError::Unsupported)?
        .push_manager()
        .map_err(|_| PushError::Unsupported)
}

async fn current_subscription(pm: &PushManager) -> Option<PushSubscription> {
    let found = JsFuture::from(pm.get_subscription().ok()?).await.ok()?;
    (!found.is_null() && !found.is_undefined()).then(|| found.unchecked_into())
}

fn subscription_json(sub: &PushSubscription) -> Option<String> {
    JSON::stringify(sub).ok()?.as_string()
}

/// `GET /api/push/key`: the bridge's key, or why there is none.
async fn key() -> Result<PushKey, PushError> {
    let window = web_sys::window().ok_or(PushError::NoKey)?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str("/api/push/key"))
        .await
        .map_err(|_| PushError::NoKey)?
        .unchecked_into();
    // A moment's outage says when to ask again; off says nothing.
    if response.status() == 503 && !response.headers().has("retry-after").unwrap_or(true) {
        return Err(PushError::Off);
    }
    if !response.ok() {
        return Err(PushError::NoKey);
    }
    let text = JsFuture::from(response.text().map_err(|_| PushError::NoKey)?)
        .await
        .ok()
        .and_then(|v| v.as_string())
        .ok_or(PushError::NoKey)?;
    api::read_answer::<PushKey>(&text).ok_or(PushError::NoKey)
}

/// This browser's push subscription as JSON (`PushSubscription.toJSON()`),
/// made with the bridge's key from `/api/push/key` when there is none.
/// The key is asked for either way: a bridge whose Web Push is off says
/// so ([`PushError::Off`]).
pub async fn subscribe() -> Result<String, PushError> {
    let pm = push_manager().await?;
    let key = key().await?;
    if let Some(sub) = current_subscription(&pm).await {
        return subscription_json(&sub).ok_or(PushError::Subscribe);
    }
    let options = PushSubscriptionOptionsInit::new();
    options.set_user_visible_only(true);
    options.set_application_server_key(&JsValue::from_str(&key.public_key));
    let asked = pm
        .subscribe_with_options(&options)
        .map_err(|_| PushError::Subscribe)?;
    let sub: PushSubscription = JsFuture::from(asked)
        .await
        .map_err(|_| PushError::Subscribe)?
        .unchecked_into();
    subscription_json(&sub).ok_or(PushError::Subscribe)
}

/// This browser's push subscription as JSON, when it has one and may
/// show notifications; never made here. The page renews it with its
/// watches on every load (the bridge deletes one not renewed in 30 days).
pub async fn existing() -> Option<String> {
    if permission() != Permission::Granted {
        return None;
    }
    let pm = push_manager().await.ok()?;
    subscription_json(&current_subscription(&pm).await?)
}

/// Sends `body` (see `notify::watches::subscription_body`) to the bridge.
pub async fn put_watches(body: &str) -> Result<(), PushError> {
    match api::send_json("PUT", "/api/push/subscription", body).await {
        s if (200..300).contains(&s) => Ok(()),
        s => Err(PushError::Bridge(s)),
    }
}

/// Removes this browser's subscription, at the bridge and in the browser.
pub async fn unsubscribe() {
    let Ok(pm) = push_manager().await else {
        return;
    };
    let Some(sub) = current_subscription(&pm).await else {
        return;
    };
    if let Some(json) = subscription_json(&sub) {
        let _ = api::send_json("DELETE", "/api/push/subscription", &unsubscribe_body(&json)).await;
    }
    if let Ok(p) = sub.unsubscribe() {
        let _ = JsFuture::from(p).await;
    }
}

/// How an event the tab decided was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// As a system notification (or the service worker already showed it).
    Notification,
    /// Not at all: the page shows it itself.
    No,
}

/// Shows an event as a system notification through the service worker,
/// with `tag`. [`Shown::No`] without permission or a worker. A
/// notification with the same tag (the worker showed the push first)
/// is replaced quietly, so one event never shows twice. It does not look
/// first with `getNotifications()`: Chromium deletes the records of
/// notifications still on their way to the display when that is called,
/// so a second notice shown at once could vanish.
pub async fn show(title: &str, body: &str, tag: &str, url: &str) -> Shown {
    if permission() != Permission::Granted {
        return Shown::No;
    }
    let Some(reg) = ready().await else {
        return Shown::No;
    };
    let now = js_sys::Date::now();
    let data = js_sys::Object::new();
    let _ = Reflect::set(&data, &"url".into(), &url.into());
    let _ = Reflect::set(&data, &"at".into(), &now.into());
    let options = NotificationOptions::new();
    options.set_body(body);
    options.set_tag(tag);
    options.set_data(&data);
    let Ok(shown) = reg.show_notification_with_options(title, &options) else {
        return Shown::No;
    };
    match JsFuture::from(shown).await {
        Ok(_) => Shown::Notification,
        Err(_) => Shown::No,
    }
}
