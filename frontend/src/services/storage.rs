//! Browser storage: the admin token in sessionStorage (gone with the tab),
//! test-server definitions in localStorage (kept across reloads).

use gloo_storage::{LocalStorage, SessionStorage, Storage};

use crate::test_servers::{load_defs, save_defs, TestServerDef};

const TOKEN_KEY: &str = "lobby.adminToken";
const DEFS_KEY: &str = "lobby.testServers";

/// The admin token of this tab, if one was entered.
pub fn token() -> Option<String> {
    SessionStorage::raw()
        .get_item(TOKEN_KEY)
        .ok()
        .flatten()
        .filter(|t| !t.is_empty())
}

pub fn set_token(token: &str) {
    let _ = SessionStorage::raw().set_item(TOKEN_KEY, token);
}

/// Stored test servers; unreadable entries are dropped.
pub fn test_servers() -> Vec<TestServerDef> {
    LocalStorage::raw()
        .get_item(DEFS_KEY)
        .ok()
        .flatten()
        .map(|json| load_defs(&json))
        .unwrap_or_default()
}

pub fn set_test_servers(defs: &[TestServerDef]) {
    let _ = LocalStorage::raw().set_item(DEFS_KEY, &save_defs(defs));
}
