//! Queries other games' servers over UDP, for the lobby's browser: Valve's
//! A2S (`INFO`, `PLAYER`, `RULES`, split and compressed replies) and Serious
//! Engine's GameAgent (master list, status, players, ping).
//!
//! The decoders in [`packet`], [`a2s`] and [`gameagent`] are pure functions
//! over `&[u8]` that return errors, never panic; [`Client`] sends the
//! queries with time limits, retries and a concurrency cap; [`screen`]
//! decides which records of a master's list may be queried at all. Results are
//! plain serde types, bounded by [`Limits`]: every text field cut and
//! cleaned of control characters, players and rules per reply capped;
//! GameAgent packets and their number per reply are capped too. Feature
//! `fake` adds module `fake`: fake servers built from the seeds (and
//! hostile ones), for this crate's and the bridge's tests.

pub mod a2s;
mod client;
mod cursor;
pub mod error;
#[cfg(feature = "fake")]
pub mod fake;
pub mod gameagent;
pub mod limits;
pub mod packet;
pub mod screen;

pub use client::{Client, QueryOptions};
pub use error::{DecodeError, QueryError};
pub use limits::Limits;
