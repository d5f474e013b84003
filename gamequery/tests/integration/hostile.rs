//! Hostile replies are bounded: every text field cut to its limit on a
//! character boundary with "…" and cleaned of control characters, at most
//! the limit's players (the best-scoring) and rules, GameAgent packets no
//! longer than the engine sends and no more of them than a reply may have,
//! and a server's text in an error cut too. The replies are the largest the
//! decoders accept, made of 0x1F, which JSON writes as six bytes.

use std::time::Duration;

use gamequery::{
    a2s,
    fake::{self, hostile, HostileGameAgentServer},
    gameagent::{self, MAX_PACKET, MAX_PLAYER_PACKETS},
    limits::ELLIPSIS,
    packet, Client, DecodeError, Limits, QueryError, QueryOptions,
};
use proptest::prelude::*;

const L: Limits = Limits::DEFAULT;

/// Cut to `max` characters, no control character in it.
fn bounded_text(s: &str, max: usize) -> bool {
    s.chars().count() <= max && !s.chars().any(char::is_control)
}

/// A hostile field: it was longer than `max`, so it is exactly `max`
/// characters ending with the ellipsis, its control characters replaced.
fn is_cut(s: &str, max: usize) -> bool {
    s.chars().count() == max && s.ends_with(ELLIPSIS) && bounded_text(s, max)
}

fn refs(packets: &[Vec<u8>]) -> Vec<&[u8]> {
    packets.iter().map(Vec::as_slice).collect()
}

#[test]
fn hostile_gameagent_status_is_cut_and_cleaned() {
    let reply = hostile::gameagent_status();
    assert_eq!(reply.len(), MAX_PACKET);
    let s = gameagent::decode_status(&reply).unwrap();
    assert_eq!((s.players, s.max_players), (64, 64));
    for field in [
        &s.level,
        &s.game_type,
        &s.version,
        &s.game_name,
        &s.session_name,
    ] {
        assert!(is_cut(field, L.text_chars), "{field:?}");
    }
    assert!(s.keys.len() <= L.rules);
    for (k, v) in &s.keys {
        assert!(bounded_text(k, L.rule_name_chars), "{k:?}");
        assert!(bounded_text(v, L.rule_value_chars), "{v:?}");
    }
    // A tighter limit keeps the first keys only; the named fields are
    // still found among all of them.
    let tight = Limits {
        rules: 3,
        text_chars: 8,
        ..L
    };
    let s = gameagent::decode_status_with(&reply, &tight).unwrap();
    assert_eq!(s.keys.len(), 3);
    assert_eq!(s.keys[0].0, "players");
    assert!(is_cut(&s.session_name, 8));
    // What it costs as JSON: a few hundred bytes per field, not 6 per byte.
    let json = serde_json::to_string(&gameagent::decode_status(&reply).unwrap()).unwrap();
    assert!(!json.contains("\\u001f"), "control characters left");
}

#[test]
fn hostile_gameagent_players_keep_the_best_scoring() {
    let packets = hostile::gameagent_players(MAX_PLAYER_PACKETS);
    assert_eq!(packets.len(), MAX_PLAYER_PACKETS);
    assert!(packets.iter().all(|p| p.len() <= MAX_PACKET));
    let players = gameagent::decode_players(&refs(&packets)).unwrap();
    assert_eq!(players.len(), L.players);
    // The hostile reply gives player i i frags: the top 64 indices stay,
    // by index.
    let sent = players.last().unwrap().index + 1;
    assert!(
        sent as usize > L.players,
        "the fake sends more than the limit"
    );
    let indices: Vec<u32> = players.iter().map(|p| p.index).collect();
    let want: Vec<u32> = (sent - L.players as u32..sent).collect();
    assert_eq!(indices, want);
    for p in &players {
        assert!(is_cut(p.name.as_deref().unwrap_or_default(), L.text_chars));
    }
}

#[test]
fn too_many_or_too_large_gameagent_packets_are_refused() {
    let packets = hostile::gameagent_players(MAX_PLAYER_PACKETS + 1);
    assert_eq!(
        gameagent::decode_players(&refs(&packets)),
        Err(DecodeError::TooManyPackets)
    );
    // One byte over the engine's packet size.
    let mut status = hostile::gameagent_status();
    status.push(fake::hostile::HOSTILE_BYTE);
    assert_eq!(
        gameagent::decode_status(&status),
        Err(DecodeError::PacketTooLarge(MAX_PACKET))
    );
    let mut big = b"\x01players\x021\x03player_0\x02".to_vec();
    big.resize(MAX_PACKET, b'a');
    big.extend_from_slice(b"\x03\x04");
    assert_eq!(
        gameagent::decode_players(&[&big]),
        Err(DecodeError::PacketTooLarge(MAX_PACKET))
    );
    let mut ping = b"\x04".to_vec();
    ping.resize(MAX_PACKET + 1, b'1');
    assert_eq!(
        gameagent::decode_ping(&ping),
        Err(DecodeError::PacketTooLarge(MAX_PACKET))
    );
}

#[test]
fn a_servers_text_in_an_error_is_cut() {
    let mut reply = vec![fake::hostile::HOSTILE_BYTE; 2000];
    reply.extend_from_slice(b";players;1;maxplayers;2");
    match gameagent::decode_status(&reply) {
        Err(DecodeError::InvalidField { field, value }) => {
            assert_eq!(field, "status marker");
            assert!(is_cut(&value, 64), "{value:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn hostile_a2s_info_players_and_rules_are_cut() {
    let info = hostile::a2s_info();
    let info = a2s::decode_info(&info[4..]).unwrap();
    for field in [&info.name, &info.map, &info.folder, &info.game] {
        assert!(is_cut(field, L.text_chars), "{field:?}");
    }
    assert!(is_cut(info.version.as_deref().unwrap(), L.text_chars));
    assert!(is_cut(&info.source_tv.unwrap().name, L.text_chars));
    assert!(is_cut(info.keywords.as_deref().unwrap(), L.text_chars));

    let players = hostile::a2s_players();
    assert!(players.len() <= usize::from(packet::MAX_PACKETS));
    let reply = packet::reassemble(&refs(&players), None).unwrap();
    let players = a2s::decode_players(&reply, false).unwrap();
    assert_eq!(players.len(), L.players);
    // Player i scores i: the best 64 are 191..=254, in the server's order.
    let scores: Vec<i32> = players.iter().map(|p| p.score).collect();
    assert_eq!(scores, (191..=254).collect::<Vec<i32>>());
    assert!(players.iter().all(|p| is_cut(&p.name, L.text_chars)));

    let rules = hostile::a2s_rules();
    let reply = packet::reassemble(&refs(&rules), None).unwrap();
    let rules = a2s::decode_rules(&reply).unwrap();
    assert_eq!(rules.len(), L.rules);
    for r in &rules {
        // 7 bytes each: shorter than the limits, cleaned.
        assert_eq!(r.name, "\u{fffd}".repeat(7));
        assert_eq!(r.value, "\u{fffd}".repeat(7));
    }
    let tight = Limits {
        rules: 2,
        rule_name_chars: 4,
        rule_value_chars: 3,
        ..L
    };
    let rules = a2s::decode_rules_with(&reply, &tight).unwrap();
    assert_eq!(rules.len(), 2);
    assert!(is_cut(&rules[0].name, 4) && is_cut(&rules[0].value, 3));
}

fn client() -> Client {
    Client::new(QueryOptions {
        timeout: Duration::from_secs(2),
        retries: 0,
        ..QueryOptions::default()
    })
}

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("timed out")
}

/// Over UDP: a server's status and players are cut as the decoders cut
/// them, and a datagram longer than the engine's packets is refused (the
/// client reads one byte more than a GameAgent packet may have, not 64 KiB).
#[tokio::test]
async fn gameagent_queries_are_bounded() {
    let server = HostileGameAgentServer::start().await.unwrap();
    let c = client();
    let (status, _) = bounded(c.gameagent_status(server.addr())).await.unwrap();
    assert!(is_cut(&status.session_name, L.text_chars));
    let players = bounded(c.gameagent_players(server.addr())).await.unwrap();
    assert_eq!(players.len(), L.players);

    let long = fake::FakeUdp::start(|req: &[u8]| {
        let mut reply = b"0;players;1;maxplayers;2;sessionname;".to_vec();
        reply.resize(
            if req == gameagent::STATUS_REQUEST {
                60_000
            } else {
                3000
            },
            b'x',
        );
        vec![reply]
    })
    .await
    .unwrap();
    let err = bounded(c.gameagent_status(long.addr())).await.unwrap_err();
    assert!(
        matches!(
            err,
            QueryError::Decode {
                source: DecodeError::PacketTooLarge(MAX_PACKET),
                ..
            }
        ),
        "{err}"
    );
    let err = bounded(c.gameagent_players(long.addr())).await.unwrap_err();
    assert!(
        matches!(
            err,
            QueryError::Decode {
                source: DecodeError::PacketTooLarge(MAX_PACKET),
                ..
            }
        ),
        "{err}"
    );
}

/// Over UDP: a hostile A2S server's info, players and rules (a bzip2 bomb
/// of 65535 rules) come back within the limits the client was given.
#[tokio::test]
async fn a2s_queries_are_bounded() {
    let server = hostile::start_hostile_a2s().await.unwrap();
    let limits = Limits {
        players: 10,
        rules: 20,
        ..L
    };
    let c = Client::new(QueryOptions {
        timeout: Duration::from_secs(2),
        retries: 0,
        limits,
        ..QueryOptions::default()
    });
    let (info, _) = bounded(c.a2s_info(server.addr())).await.unwrap();
    assert!(is_cut(&info.name, L.text_chars));
    let players = bounded(c.a2s_players(server.addr(), false)).await.unwrap();
    assert_eq!(players.len(), 10);
    assert_eq!(players[0].score, 245);
    let rules = bounded(c.a2s_rules(server.addr())).await.unwrap();
    assert_eq!(rules.len(), 20);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Whatever the bytes, what a decoder returns keeps to the limits.
    #[test]
    fn decoded_text_keeps_to_the_limits(
        body in proptest::collection::vec(any::<u8>(), 0..1500),
        max in 0usize..8,
    ) {
        let limits = Limits {
            text_chars: max,
            rule_name_chars: max,
            rule_value_chars: max,
            players: max,
            rules: max,
        };
        let mut status = b"0;players;1;maxplayers;2;level;".to_vec();
        status.extend_from_slice(&body);
        if let Ok(s) = gameagent::decode_status_with(&status, &limits) {
            for f in [&s.level, &s.game_type, &s.version, &s.game_name, &s.session_name] {
                prop_assert!(bounded_text(f, max), "{:?}", f);
            }
            prop_assert!(s.keys.len() <= max);
            for (k, v) in &s.keys {
                prop_assert!(bounded_text(k, max) && bounded_text(v, max));
            }
        }
        let mut players = b"\x01players\x021\x03player_0\x02".to_vec();
        players.extend_from_slice(&body);
        players.extend_from_slice(b"\x03\x04");
        if let Ok(ps) = gameagent::decode_players_with(&[&players], &limits) {
            prop_assert!(ps.len() <= max);
            for p in &ps {
                prop_assert!(bounded_text(p.name.as_deref().unwrap_or_default(), max));
            }
        }
        for prefix in [&b"I\x11"[..], b"D\x05", b"E\x03\x00"] {
            let mut reply = prefix.to_vec();
            reply.extend_from_slice(&body);
            if let Ok(info) = a2s::decode_info_with(&reply, &limits) {
                prop_assert!(bounded_text(&info.name, max) && bounded_text(&info.map, max));
            }
            if let Ok(ps) = a2s::decode_players_with(&reply, false, &limits) {
                prop_assert!(ps.len() <= max);
                prop_assert!(ps.iter().all(|p| bounded_text(&p.name, max)));
            }
            if let Ok(rs) = a2s::decode_rules_with(&reply, &limits) {
                prop_assert!(rs.len() <= max);
                prop_assert!(rs.iter().all(|r| bounded_text(&r.name, max) && bounded_text(&r.value, max)));
            }
        }
    }
}
