//! The stored form of the definitions (JSON in localStorage): a reload
//! keeps the tab's test servers, and an entry that no longer reads is
//! dropped rather than failing the rest.

use gloo_storage::{LocalStorage, Storage};

use super::TestServerDef;

const DEFS_KEY: &str = "lobby.testServers";

/// The stored test servers; unreadable entries are dropped.
pub fn load() -> Vec<TestServerDef> {
    LocalStorage::raw()
        .get_item(DEFS_KEY)
        .ok()
        .flatten()
        .map(|json| load_defs(&json))
        .unwrap_or_default()
}

/// Keeps `defs` for the next load of the page.
pub fn save(defs: &[TestServerDef]) {
    let _ = LocalStorage::raw().set_item(DEFS_KEY, &save_defs(defs));
}

/// Reads stored definitions, dropping anything unreadable.
pub fn load_defs(json: &str) -> Vec<TestServerDef> {
    serde_json::from_str::<Vec<serde_json::Value>>(json)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect()
}

pub fn save_defs(defs: &[TestServerDef]) -> String {
    serde_json::to_string(defs).unwrap_or_else(|_| "[]".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_unreadable_entries() {
        let defs = crate::test_servers::samples::samples(1);
        let stored = save_defs(&defs);
        assert_eq!(load_defs(&stored), defs);
        assert!(load_defs("not json").is_empty());
        let mixed = format!(
            "[{{\"id\":1}}, {}]",
            serde_json::to_string(&defs[0]).unwrap()
        );
        assert_eq!(load_defs(&mixed), vec![defs[0].clone()]);
    }
}
