//! The lobby's load generator: starts the real `master` and `bridge`
//! binaries on loopback, drives them with TCP and WebSocket clients (and
//! headless Chromium for the page), and reports every figure beside a
//! baseline measured in the same run.
//!
//! `loadgen` (in `main.rs`) picks the phases; each phase in [`phases`]
//! returns rows of the one [`report::Table`].

pub mod cdp;
pub mod direct;
pub mod error;
pub mod phases;
pub mod procs;
pub mod report;
pub mod sizes;
pub mod ws;

pub use error::{Error, Result};
pub use sizes::Sizes;
