//! The app-level contexts every page shares: the lobby connection and its
//! state (`lobby`), the player's marks and language (`settings`) and the tab's
//! test servers with their sockets (`test_servers`). The providers are
//! glue; what a connection event does is decided by pure, natively tested
//! functions beside them (`lobby_events`, `test_server_flow`).

pub mod lobby;
pub mod lobby_events;
pub mod settings;
pub mod test_server_flow;
pub mod test_servers;
