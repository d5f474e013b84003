//! Notifications: the events decided from the live list ([`watch`]), the
//! one engine that writes and sends their deliveries ([`engine`]), and
//! each way of notifying, a [`channel::Channel`]: [`webhooks`] and Web
//! [`push`]; [`notifiers`] opens all three from the configuration.

pub mod channel;
pub mod engine;
pub(crate) mod notifiers;
pub mod push;
pub mod watch;
pub mod webhooks;
