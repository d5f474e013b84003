//! Notifications: the events decided from the live list ([`watch`]), the
//! one engine that writes and sends their deliveries ([`engine`]), and
//! each way of notifying, a [`channel::Channel`]: [`webhooks`] and Web
//! [`push`].

pub mod channel;
pub mod engine;
pub mod push;
pub mod watch;
pub mod webhooks;
