//! The benchmark's phases. Each starts its own master and bridge (fresh
//! processes, so one phase's memory or connections do not colour the
//! next), measures, stops them, and returns rows of the table.

pub mod bundle;
pub mod cards;
pub mod change_cost;
mod crowd;
pub mod deltas;
pub mod fanout;
pub mod handover;
pub mod history;
pub mod lighthouse;
pub mod memory;
pub mod page;
pub mod push;
pub mod relay;
pub mod scale100k;
pub mod scaleout;
mod shared_db;
pub mod soak;
pub mod webhooks;

use crate::{procs::Binaries, sizes::Sizes};

/// What every phase gets.
#[derive(Debug, Clone)]
pub struct Env {
    /// The programs under test and the work directory.
    pub bins: Binaries,
    /// Counts and durations.
    pub sizes: Sizes,
    /// The CPU to pin client, bridge and master to for the round-trip
    /// figure (`None`: `taskset` is missing or pinning was turned off).
    pub pin_cpu: Option<String>,
}
