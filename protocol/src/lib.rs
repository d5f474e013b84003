//! The lobby's wire contract (`docs/protocol.md`) as Rust types: the master's
//! messages, the bridge's messages, every validation rule, and the framing.
//!
//! The master, the bridge and the front end all depend on this crate so that a
//! rule lives in exactly one place. It has no tokio dependency unless the
//! `codec` feature is on, so it also builds for `wasm32-unknown-unknown`.

#[cfg(feature = "addresses")]
pub mod address;
pub mod api;
pub mod bridge;
#[cfg(feature = "codec")]
pub mod codec;
pub mod delta;
pub mod entry;
pub mod feed;
pub mod frame;
pub mod join;
pub mod json;
pub mod key;
pub mod message;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod page;
pub mod push;
pub mod reply;
#[cfg(feature = "openapi")]
mod schema;
pub mod stats;
pub mod validate;
pub mod watch;
pub mod webhook;

pub use entry::{Addresses, ServerEntry};
pub use key::ServerKey;
pub use message::{Command, MessageError, Players, ServerList, Stats};
pub use reply::is_query_reply;
pub use validate::{
    GameplayMode, Registration, ServerAddress, ServerName, ServerPort, ValidationError,
};

/// TCP port of the master server, fixed by the specification.
pub const MASTER_PORT: u16 = 51963;

/// Largest frame (JSON plus newline) the master accepts; larger ones are skipped.
pub const MAX_FRAME_LEN: usize = 65536;
