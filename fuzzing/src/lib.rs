//! The bodies of the lobby's fuzz targets: one function per target, taking
//! the fuzzer's bytes, for every parser that reads bytes from outside (the
//! master's framing and messages, the bridge's WebSocket frames and
//! headers, the page's delta apply, the bridge's apply of a master's
//! change feed, the A2S and GameAgent decoders, the admin's webhook
//! requests).
//!
//! Each function panics only when a parser panics or breaks one of the
//! properties it checks (round trips, agreement between two readers,
//! bounds). The cargo-fuzz crate in `fuzz/` calls them from one-line
//! targets; `tests/replay.rs` runs every committed corpus and regression
//! input through them under `cargo test`, so CI replays the corpora without
//! libFuzzer. [`seeds`] holds the starting inputs built from real samples.

mod a2s;
mod bridge_headers;
mod command;
mod delta;
mod feed;
mod frame;
mod gameagent;
mod inbound;
pub mod input;
pub mod seeds;
mod webhook;

pub use a2s::a2s;
pub use bridge_headers::{forwarded, origin};
pub use command::command;
pub use delta::{delta_apply, delta_sync};
pub use feed::feed_apply;
pub use frame::frame;
pub use gameagent::gameagent;
pub use inbound::inbound;
pub use webhook::webhook;

/// One fuzz target: its name (the file `fuzz/fuzz_targets/<name>.rs` and
/// the folders `fuzz/corpus/<name>/`, `fuzz/regressions/<name>/`) and body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, so the replay test and `scripts/fuzz.sh` cannot miss one.
pub const TARGETS: &[Target] = &[
    ("frame", frame),
    ("command", command),
    ("inbound", inbound),
    ("delta_apply", delta_apply),
    ("delta_sync", delta_sync),
    ("feed_apply", feed_apply),
    ("a2s", a2s),
    ("gameagent", gameagent),
    ("forwarded", forwarded),
    ("origin", origin),
    ("webhook", webhook),
];
