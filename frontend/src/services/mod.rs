//! Side effects: the bridge connection (socket, decoding, polling, where
//! the list stands), browser storage, small browser APIs (clocks,
//! clipboard) and render timing for benchmarks (`metrics`).

pub mod browser;
pub mod connection;
pub mod metrics;
pub mod storage;
