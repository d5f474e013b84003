//! The lobby's master server (`docs/protocol.md` §1): game servers
//! stay connected over TCP to be listed, clients connect to ask for the list.
//!
//! The library takes an already-bound listener so that tests and the bridge
//! (which embeds the master) can bind wherever they like.

pub mod bans;
pub mod fdlimit;
pub mod feed;
pub mod limits;
pub mod logging;
pub mod logtext;
pub mod registry;
pub mod secret;
pub mod server;
pub mod signal;

pub use bans::BanList;
pub use feed::{FeedConfig, FeedServer};
pub use ipnet::IpNet;
pub use registry::Registry;
pub use server::{bind, run, Config, ConfigError, Master};
