//! The lobby's WebSocket bridge (`docs/protocol.md` §2): serves the
//! front end, and relays browsers to the master over `/ws`. Viewers share
//! one upstream (the embedded master's change watch, or one connection
//! that polls a remote master); each admin gets its own master connection,
//! so its test server lives as long as its WebSocket.
//!
//! Like the master, the library takes an already-bound listener so tests
//! (and the binary) choose the port.

mod api;
pub mod assets;
mod badge;
mod budget;
mod card;
pub mod config;
mod ctx;
pub mod error;
mod face;
pub mod feed;
pub mod forwarded;
pub mod games;
pub mod history;
mod history_api;
mod http;
pub mod keys;
mod markup;
pub mod metrics;
pub mod notify;
pub mod origin;
mod pages;
pub mod publish;
pub mod push;
mod server;
mod session;
pub mod token;
pub mod upstream;
pub mod watch;
pub mod webhooks;

pub use config::Config;
pub use error::Error;
pub use server::{run, Bridge};
pub use token::AdminToken;
