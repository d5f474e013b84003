//! Side effects: the bridge connection (socket, decoding, polling, the
//! list it keeps), browser storage and small browser
//! APIs (clocks, clipboard, render metrics).

pub mod browser;
pub mod connection;
pub mod storage;
