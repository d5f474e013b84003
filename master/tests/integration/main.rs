//! The master's integration tests, one binary (each file a module):
//! real TCP clients against the master in process or as its binary.
//! `common` is what they share.

mod binary;
mod common;
mod feed;
mod feed_guard;
mod limits;
mod server;
