//! Hooks that turn the shared state into what one view shows (a view
//! model), so the components only draw: `lobby` for the lobby's own list,
//! `games` for one source of other games' servers, and `table` for the
//! page of either that a table shows; `server` for one server's page,
//! over `fetch`, which holds one of the bridge's JSON answers. Components
//! depend on these, never the other way round. What a hook remembers
//! between renders (the last arrangement, which rows are new) it keeps to
//! itself and updates once per list version.

pub mod fetch;
pub mod games;
pub mod lobby;
pub mod server;
pub mod table;
