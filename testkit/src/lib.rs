//! The lobby's test kit: what every crate's tests and the benchmarks
//! share, written once.
//!
//! - Waiting ([`wait`]): [`until`] a signal the product gives (an event, a
//!   log line, a metric, a DOM state), bounded only by [`HUNG`], which
//!   fails a hung test and never judges speed.
//! - The product's outside: `/metrics` samples ([`metrics`]) and plain
//!   HTTP on loopback ([`http`]).
//! - The product as real processes ([`launch`]: the one launcher of the
//!   `bridge` and `master` binaries, their flags and ready lines, for the
//!   tests and the benchmarks; [`product`]: a test's running lobby;
//!   [`process`]: children killed with their process group on drop;
//!   [`paths`]: where the binaries and `dist/` are; [`procfs`]: their
//!   memory and CPU time as `/proc` says).
//! - A master that misbehaves as the test scripts it ([`fake_master`]),
//!   and the master protocol's framing of a reply; a TCP proxy to cut
//!   between two parts of the product ([`proxy`]).
//! - The deployment's own parts: nginx in front of two bridges
//!   ([`nginx`]) and a scratch PostgreSQL cluster ([`postgres`]).
//! - Stand-ins for what the product talks to: Discord's webhook API
//!   ([`discord`]), for the status card's tests and its benchmark, and a
//!   Web Push service ([`push_service`]) that decrypts for browsers made
//!   in a test or forwards to a real Firefox.
//!
//! It does not link the `bridge` or `master` libraries (a test build that
//! did would hold a second copy of the crate under test); in-process
//! helpers over those live in each crate's `tests/integration/common`.
//! The front end's component tests run in the browser (wasm32, no tokio,
//! no sockets) and keep their own `until` on the browser's clock, bounded
//! by the same 60 s.

pub mod discord;
pub mod fake_master;
pub mod http;
pub mod launch;
pub mod metrics;
pub mod nginx;
pub mod paths;
pub mod postgres;
pub mod process;
pub mod procfs;
pub mod product;
pub mod proxy;
pub mod push_service;
pub mod wait;

pub use wait::{
    bounded, timed, try_bounded, try_until, until, until_blocking, until_true, Hung, HUNG, POLL,
};

/// Why a support function failed: a file it could not write, or in words
/// (what to install, what in the deployed file no longer matches).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Unexpected(String),
}

/// Results of the support functions.
pub type Result<T> = std::result::Result<T, Error>;
