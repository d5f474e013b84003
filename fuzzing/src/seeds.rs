//! Starting inputs for the targets, from the repository's real samples:
//! the contract's example messages and the seeds' packet dumps
//! (`gamequery/tests/fixtures`). `scripts/fuzz.sh` writes them to
//! `fuzz/seeds/<target>/` (not committed: they are rebuilt from here) and
//! the replay test runs them directly.

use std::net::{Ipv4Addr, SocketAddrV4};

use gamequery::{
    gameagent::{self, Player, Status},
    packet::{self, SplitLayout},
};
use protocol::{
    delta::{delta_json, snapshot_json, Changeset, Keyed},
    frame::frame,
    GameplayMode, Players, ServerEntry, Stats,
};

use crate::input::join_parts;

/// One seed: a file name and its bytes.
pub type Seed = (String, Vec<u8>);

/// The seeds of the target named `target` (none for an unknown name and
/// for the `arbitrary`-driven delta and feed targets, which start from
/// nothing).
pub fn seeds(target: &str) -> Vec<Seed> {
    match target {
        "frame" => frame_seeds(),
        "command" => named(MASTER_MESSAGES.iter().map(|m| m.as_bytes().to_vec())),
        "inbound" => inbound_seeds(),
        "a2s" => a2s_seeds(),
        "gameagent" => gameagent_seeds(),
        "forwarded" => forwarded_seeds(),
        "origin" => named(ORIGINS.iter().map(|o| o.as_bytes().to_vec())),
        "webhook" => named(WEBHOOKS.iter().map(|w| w.as_bytes().to_vec())),
        _ => Vec::new(),
    }
}

fn named(inputs: impl IntoIterator<Item = Vec<u8>>) -> Vec<Seed> {
    inputs
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| (format!("seed-{i:02}"), bytes))
        .collect()
}

/// Webhook requests as an admin sends them (`docs/protocol.md` §4.10), and
/// names a stranger might choose.
const WEBHOOKS: [&str; 6] = [
    r#"{"url":"https://discord.com/api/webhooks/1/abc","format":"discord","events":["lobby-opened","players-reached"],"servers":{"nameContains":"Feuerland"},"threshold":3}"#,
    r#"{"url":"https://hooks.example.org/lobby","format":"standard","events":["server-online","server-offline"],"servers":{"keys":["00abcdef01234567"]},"cooldown":0}"#,
    r#"{"url":"http://[::ffff:127.0.0.1]:8080/x","format":"standard","events":["server-online"],"servers":"all"}"#,
    r#"{"enabled":false}"#,
    "@everyone [click](https://evil.example) **bold** `code` \u{202e}",
    "Feuerland",
];

/// The contract's example messages, a list with an entry to skip and a
/// registration's fields as the validators' lines.
const MASTER_MESSAGES: [&str; 8] = [
    r#"{"command":"msRegisterGameServer","content":{"serverName":"Feuerland","serverAddress":"192.168.0.10","serverPort":20000}}"#,
    r#"{"command":"msUpdateGameServerStats","content":{"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":2}}"#,
    r#"{"command":"msQueryGameServers"}"#,
    r#"{"command":"msUnregisterGameServer"}"#,
    r#"{"command":"msRQueryGameServers","content":{"servers":[{"name":"Feuerland","address":"192.168.0.10","port":20000,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":2}]}}"#,
    r#"{"command":"msRQueryGameServers","content":{"servers":[{"name":"x","players":{"current":"3","max":2},"isLobbyOpen":false,"gameplayMode":1},{"name":7}]}}"#,
    r#"{"command":"msRegisterGameServer","content":{"serverName":"轰炸机人","serverAddress":"fd40:9dc7:b528::1","serverPort":51962}}"#,
    "Feuerland\nbombergame.example.org\n20000",
];

fn frame_seeds() -> Vec<Seed> {
    let mut stream = Vec::new();
    for m in &MASTER_MESSAGES[..5] {
        stream.extend_from_slice(&frame(m.as_bytes()));
    }
    let small = [
        b"17{\"Hallo\":\"Welt\"}\n".to_vec(),
        b"hello world\n3{}\n".to_vec(),
        b"{\"command\":\"msQueryGameServers\"}\r\n".to_vec(),
        b"10{\"Hallo\":\"Welt\"}\n3{}\n".to_vec(),
        b"2000zzzz\n3{}\n".to_vec(),
        b"1000000{}\n0\n".to_vec(),
    ];
    let mut inputs = vec![[&[0x80, 6, 1][..], &stream].concat()];
    for (i, s) in small.iter().enumerate() {
        let limits: &[u8] = &[16, 2 + i as u8, i as u8];
        inputs.push([limits, s].concat());
    }
    named(inputs)
}

fn entry(name: &str, current: u32) -> ServerEntry {
    ServerEntry {
        registrant: None,
        name: name.to_owned(),
        address: Some("192.0.2.1".to_owned()),
        port: Some(20000),
        stats: Stats {
            players: Players { current, max: 4 },
            is_lobby_open: true,
            gameplay_mode: GameplayMode::StandardAB,
        },
    }
}

fn inbound_seeds() -> Vec<Seed> {
    let servers = [
        Keyed {
            id: 1,
            key: None,
            entry: entry("Feuerland", 2),
        },
        Keyed {
            id: 4,
            key: None,
            entry: entry("轰炸机人", 0),
        },
    ];
    let change = Changeset {
        upsert: servers[1..].to_vec(),
        remove: vec![2, 3],
    };
    let mut frames: Vec<String> = [
        r#"{"command":"bridgeAuth","content":{"token":"secret"}}"#,
        r#"{"command":"bridgeSubscribe"}"#,
        r#"{"command":"bridgeSubscribe","content":{"deltas":true,"epoch":"e","since":4}}"#,
        r#"{"command":"bridgeUnsubscribe"}"#,
        r#"{"command":"bridgeAuthResult","content":{"ok":true}}"#,
        r#"{"command":"bridgeStatus","content":{"master":"down"}}"#,
        r#"{"command":"bridgeError","content":{"code":"rate-limited","message":"slow down"}}"#,
        r#"{"command":"msQueryGameServers"}"#,
        r#"{"command":"msFly","content":{}}"#,
    ]
    .map(str::to_owned)
    .to_vec();
    frames.push(snapshot_json("e1", 3, &servers, protocol::Addresses::Shown));
    frames.push(delta_json("e1", 4, 3, &change, protocol::Addresses::Hidden));
    named(frames.into_iter().map(String::into_bytes))
}

/// A fixture's hex dump as bytes.
fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .filter_map(|b| u8::from_str_radix(b, 16).ok())
        .collect()
}

macro_rules! fixture {
    ($name:literal) => {
        hex(include_str!(concat!(
            "../../gamequery/tests/fixtures/",
            $name,
            ".hex"
        )))
    };
}

fn a2s_seeds() -> Vec<Seed> {
    let with = |flags: u8, packets: &[Vec<u8>]| [vec![flags], join_parts(packets)].concat();
    let cs = fixture!("ru_cs_source_info");
    let split = [fixture!("ru_rules_split_0"), fixture!("ru_rules_split_1")];
    let mut inputs = vec![
        with(0, std::slice::from_ref(&cs)),
        with(0, &[fixture!("ja_cs_source_info")]),
        with(0, &[fixture!("ru_goldsource_info")]),
        with(0, &[fixture!("ru_rdkf_info")]),
        with(0, &[fixture!("ru_sin1_info")]),
        with(4, &[fixture!("ru_the_ship_info")]),
        with(0, &[fixture!("ru_players")]),
        with(4, &[fixture!("ru_the_ship_players")]),
        with(0, &[fixture!("ru_info_challenge")]),
        with(0, &[fixture!("ru_ping_source")]),
        with(0, &[fixture!("ru_ping_goldsource")]),
        with(0, &split),
        with(1, &[split[1].clone(), split[0].clone()]),
        with(
            3,
            &packet::split(&cs, 7, SplitLayout::GoldSource, 64, false),
        ),
        with(
            0,
            &packet::split(&cs, 9, SplitLayout::SourceNoSize, 100, false),
        ),
        with(9, &[cs[4..].to_vec()]),
    ];
    // A compressed split reply, as some Source servers send rules.
    let split_refs: Vec<&[u8]> = split.iter().map(Vec::as_slice).collect();
    if let Ok(rules) = packet::reassemble(&split_refs, None) {
        let whole = [&packet::SINGLE.to_le_bytes()[..], &rules].concat();
        inputs.push(with(
            1,
            &packet::split(&whole, 0x11, SplitLayout::Source, 600, true),
        ));
    }
    named(inputs)
}

fn gameagent_seeds() -> Vec<Seed> {
    let with = |flags: u8, packets: &[Vec<u8>]| [vec![flags], join_parts(packets)].concat();
    let list = gameagent::encode_master_list(&[
        SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 10), 25600),
        SocketAddrV4::new(Ipv4Addr::new(198, 51, 100, 7), 25602),
    ]);
    let status = gameagent::encode_status(&Status {
        players: 3,
        max_players: 16,
        level: "Sand Canyon".into(),
        game_type: "Cooperative".into(),
        version: "1.07".into(),
        game_name: "serioussamse".into(),
        session_name: "Sam; and friends".into(),
        keys: Vec::new(),
    });
    let players = [
        Player {
            index: 0,
            name: Some("Sam".into()),
            frags: 12,
            ping: 40,
        },
        Player {
            index: 3,
            name: None,
            frags: -1,
            ping: 999,
        },
        Player {
            index: 5,
            name: Some("Семён".into()),
            frags: 0,
            ping: 0,
        },
    ];
    named([
        with(0, &[list]),
        with(0, &[status]),
        with(0, &[b"\x0412".to_vec()]),
        with(1, &gameagent::encode_players(3, &players, 64)),
        with(2, &gameagent::encode_players(4, &players, 4096)),
    ])
}

fn forwarded_seeds() -> Vec<Seed> {
    let with = |flags: u8, headers: &str| [&[flags, 0x50, 0x00][..], headers.as_bytes()].concat();
    named([
        with(0b0000_1000, "1.1.1.1, 203.0.113.9\n10.0.0.7"),
        with(0b0000_1000, "203.0.113.9, unknown, 10.0.0.7"),
        with(
            0b0011_0011,
            r#"for=192.0.2.60;proto=http, For="[2001:db8:cafe::17]:4711""#,
        ),
        with(0b0111_1100, "198.51.100.4:1234"),
        with(0b1000_1001, "for=unknown\n1.2.3.4"),
    ])
}

/// `Origin`, `Host`, then allowed origins, one a line.
const ORIGINS: [&str; 5] = [
    "http://lobby.example:8080\nlobby.example:8080",
    "https://LOBBY.example:8080/\nlobby.example:8080",
    "http://localhost:3000\n",
    "http://[::1]:80x\nlobby.example",
    "https://lobby.example\nlobby.example:8080\nhttps://lobby.example/\nhttp://other.example",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_seed_decodes() {
        // A broken path or hex dump would leave an empty seed behind.
        for (name, bytes) in a2s_seeds() {
            assert!(bytes.len() > 8, "{name}");
        }
        assert!(a2s_seeds().len() >= 17, "the compressed seed is missing");
    }
}
