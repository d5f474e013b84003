//! The bridge's database: one [`store::Database`] over its two engines
//! (the embedded file or PostgreSQL), of which each owner keeps its own
//! tables behind its own type: the player [`history`], the webhooks'
//! [`store::WebhookStore`], Web Push's [`store::PushStore`], and the
//! notification engine's deliveries; [`database`] opens it, with the key
//! secret, before a bridge starts.

pub(crate) mod database;
pub mod history;
pub mod store;
