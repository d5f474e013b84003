//! The demo servers behind "add samples": names in several scripts and
//! varied stats (more players than slots, closed lobbies, both modes).

use super::TestServerDef;

/// Ten demo servers with names in several scripts and varied stats.
pub fn samples(first_id: u64) -> Vec<TestServerDef> {
    const NAMES: [&str; 10] = [
        "Feuerland",
        "轰炸机人",
        "Server von Bösewicht",
        "Nordlicht",
        "Café Bombé",
        "Ледяная арена",
        "桜 Sakura",
        "Dune Runner",
        "Λαβύρινθος",
        "Oasis ☀",
    ];
    NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let i32_ = i as u32;
            let max = 2 + (i % 3) as u8;
            TestServerDef {
                id: first_id + i as u64,
                name: (*name).to_owned(),
                address: format!("198.51.100.{}", 10 + i),
                port: 20001 + i as u16,
                current: (i32_ * 7 + 1) % (u32::from(max) + 2),
                max,
                open: i % 3 != 2,
                mode: 1 + (i % 2) as u8,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_valid_servers_one_over_full() {
        let defs = samples(1);
        assert_eq!(defs.len(), 10);
        assert_eq!(
            defs.iter().map(|d| d.id).collect::<Vec<_>>(),
            (1..=10).collect::<Vec<_>>()
        );
        for d in &defs {
            assert!(d.register_json().is_ok(), "{d:?}");
        }
        assert!(defs.iter().any(|d| d.current > u32::from(d.max)));
    }
}
