//! The app-level contexts every page shares: the lobby connection and its
//! state (`lobby`) and the player's marks and language (`settings`). The
//! tab's test servers have their provider in their own folder
//! (`test_servers::provider`). The providers are glue; what a connection
//! event does is decided by pure, natively tested functions elsewhere
//! (`state::events`, `test_servers::flow`).

pub mod lobby;
pub mod notify;
pub mod settings;
