//! The lobby's WebSocket bridge (`docs/protocol.md` §2): serves the
//! front end, and relays browsers to the master over `/ws`. Viewers share
//! one upstream (the embedded master's change watch, or one connection
//! that polls a remote master); each admin gets its own master connection,
//! so its test server lives as long as its WebSocket.
//!
//! Its folders are its four jobs: [`live`] the live list (from the master
//! to every socket), [`http`] what it answers over HTTP, [`notify`] the
//! events decided from the list and their notifications, and [`db`] the
//! database. Beside them stand what all four share (`config`, `error`,
//! `metrics`, `token`, `budget`, `visibility`) and what wires them (`ctx`, `server`).
//!
//! Like the master, the library takes an already-bound listener so tests
//! (and the binary) choose the port.

mod budget;
pub mod config;
mod ctx;
pub mod db;
pub mod error;
pub mod http;
pub mod live;
pub mod metrics;
pub mod notify;
mod server;
pub mod token;
pub mod visibility;

pub use config::Config;
pub use error::Error;
pub use server::Bridge;
pub use token::AdminToken;
