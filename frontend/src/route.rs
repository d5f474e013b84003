//! The app's pages and their paths: the protocol's one definition
//! (`protocol::page`), which the bridge also answers by (the router in
//! `router` only tracks where the tab is).

pub use protocol::page::Route;
