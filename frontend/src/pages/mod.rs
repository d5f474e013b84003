//! One component per route.

pub mod admin;
pub mod embed;
pub mod home;
pub mod not_found;
pub mod server;
