//! The notifications a bridge runs, made once from its configuration:
//! the webhooks and Web Push, each a [`Channel`], and the one engine over
//! both, all kept in the bridge's database.

use std::sync::Arc;

use tracing::warn;

use crate::{
    config::Config,
    db::store::{Database, PushStore, WebhookStore},
    error::Error,
    notify::{
        channel::Channel,
        engine::{Notify, NotifyCounters},
        push::{self, Push},
        webhooks::{self, Webhooks},
    },
    visibility::Visibility,
};

/// The two channels and their engine, opened on one database.
#[derive(Debug)]
pub(crate) struct Notifiers {
    /// The admin's webhooks and their deliveries.
    pub(crate) webhooks: Arc<Webhooks>,
    /// Web Push's subscriptions and their pushes.
    pub(crate) push: Arc<Push>,
    /// The engine that writes and sends both channels' deliveries.
    pub(crate) engine: Arc<Notify>,
}

impl Notifiers {
    /// The webhooks, Web Push and their engine on `database`, with
    /// `config`'s settings; an error when either channel cannot open.
    pub(crate) fn open(
        config: &Config,
        visibility: Visibility,
        database: &Database,
    ) -> Result<Self, Error> {
        let counters = Arc::new(NotifyCounters::default());
        let webhooks = Arc::new(open_webhooks(
            config,
            visibility,
            WebhookStore::new(database.clone()),
            counters.clone(),
        )?);
        let push = Arc::new(open_push(
            config,
            visibility,
            PushStore::new(database.clone()),
        )?);
        let engine = Arc::new(Notify::new(
            database.clone(),
            vec![
                webhooks.clone() as Arc<dyn Channel>,
                push.clone() as Arc<dyn Channel>,
            ],
            counters,
        ));
        Ok(Self {
            webhooks,
            push,
            engine,
        })
    }
}

/// The webhooks kept in `store`.
fn open_webhooks(
    config: &Config,
    visibility: Visibility,
    store: WebhookStore,
    counters: Arc<NotifyCounters>,
) -> Result<Webhooks, Error> {
    let settings = webhooks::WebhookSettings {
        allow_private: config.webhook_allow_private,
        public_url: config
            .public_url
            .as_ref()
            .map(|u| u.trim_end_matches('/').to_owned()),
        visibility,
    };
    Webhooks::open(store, settings, counters)
}

/// Web Push, its key and subscriptions kept in `store`.
fn open_push(config: &Config, visibility: Visibility, store: PushStore) -> Result<Push, Error> {
    let public_url = config
        .public_url
        .as_ref()
        .map(|u| u.trim_end_matches('/').to_owned());
    let contact = match (&config.push_contact, &public_url) {
        (Some(given), _) => push::vapid::contact(given)
            .map_err(|e| format!("Web Push is off: its contact (--push-contact) {e}")),
        (None, Some(url)) if push::vapid::contact(url).is_ok() => {
            push::vapid::contact(url).map_err(|e| e.to_string())
        }
        (None, _) => Err(push::NO_CONTACT.to_owned()),
    };
    if let Err(why) = &contact {
        warn!("{why}");
    }
    let settings = push::PushSettings {
        allow_insecure: config.push_allow_insecure,
        public_url,
        contact,
        expire_after: config.push_expire_after,
        visibility,
        max_subscriptions: config.push_max_subscriptions,
        max_per_address: config.push_max_per_address,
    };
    Push::open(store, settings)
}
