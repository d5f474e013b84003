//! Side effects: the bridge's JSON answers over HTTP (`api`), the bridge connection (socket, decoding, polling, where
//! the list stands), browser storage, small browser APIs (clocks,
//! clipboard) and render timing for benchmarks (`metrics`).

pub mod api;
pub mod browser;
pub mod connection;
pub mod metrics;
pub mod push;
pub mod storage;
