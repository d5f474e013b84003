//! Fake game servers on UDP for tests (feature `fake`): [`FakeUdp`] answers
//! each datagram with what a handler returns, and [`A2sServer`],
//! [`GameAgentServer`] and [`GameAgentMaster`] play real servers from the
//! seeds' packet dumps, with switches for live changes and outages;
//! [`hostile`] builds the largest replies the decoders accept.
//!
//! The A2S replies are the fixtures in `tests/fixtures/` (the seeds' hex
//! dumps), included at compile time, so they ship with the crate.

mod a2s;
mod gameagent;
pub mod hostile;
mod udp;

pub use a2s::{
    a2s_handler, cs_source_info, cs_source_players, cs_source_rules, A2sServer, ALTERNATE_MAP,
    CHALLENGE,
};
pub use gameagent::{GameAgentMaster, GameAgentServer};
pub use hostile::HostileGameAgentServer;
pub use udp::{FakeUdp, Options};

/// Reads a hex dump like the fixtures (`FF FF 41 …`, any whitespace), so
/// tests can use the seeds' packets. Panics on a malformed dump: the dumps
/// are constants, and a broken one is a bug in the test.
pub fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap_or_else(|e| panic!("bad hex byte {b:?}: {e}")))
        .collect()
}
