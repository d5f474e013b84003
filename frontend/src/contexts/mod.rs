//! The app-level contexts every page shares: the lobby connection and its
//! state (`lobby`), the player's marks and language (`marks`) and the tab's
//! test servers with their sockets (`test_servers`).

pub mod lobby;
pub mod marks;
pub mod test_servers;
