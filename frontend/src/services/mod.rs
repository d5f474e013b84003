//! Side effects: the bridge WebSocket, browser storage and small browser
//! APIs (clocks, clipboard, render metrics).

pub mod browser;
pub mod connection;
pub mod storage;
