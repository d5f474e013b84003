//! The stored form of the definitions (JSON in localStorage): a reload
//! keeps the tab's test servers, and an entry that no longer reads is
//! dropped rather than failing the rest.

use super::TestServerDef;

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
