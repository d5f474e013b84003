//! The bridge's integration tests, one binary (each file a module, linked
//! once against the dependency tree instead of once per file): the bridge
//! in process or as its binary, against real masters, databases, browsers'
//! sockets and loopback receivers. `common` is what they share.

mod binary;
mod cards;
mod common;
mod deltas;
mod discord_card;
mod egress;
mod feed;
mod games;
mod guard;
mod history;
mod hostile_feed;
mod keys;
mod openapi;
mod ordering;
mod pages;
mod push;
mod relay;
mod scale;
mod shared_store;
mod webhooks;
