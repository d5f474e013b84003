//! Malformed replies give errors, never panics: truncation at every byte,
//! wrong headers, bad packet counts, mismatched IDs, bad sizes and CRCs;
//! plus the Extra Data Flag fields, and a proptest that feeds arbitrary and
//! mutated bytes to every decoder.

use gamequery::{
    a2s, gameagent,
    packet::{self, Reassembler, SplitLayout},
    DecodeError,
};
use proptest::prelude::*;

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

fn cs_source() -> Vec<u8> {
    hex(include_str!("../fixtures/ru_cs_source_info.hex"))
}

fn split_packet(id: u32, total: u8, number: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = packet::SPLIT.to_le_bytes().to_vec();
    p.extend_from_slice(&id.to_le_bytes());
    p.extend_from_slice(&[total, number]);
    p.extend_from_slice(&1248u16.to_le_bytes());
    p.extend_from_slice(payload);
    p
}

#[test]
fn every_truncation_of_every_seed_reply_is_an_error() {
    // The third value: final bytes a reply may lack (an `'m'` reply its bots
    // byte, as HLTV proxies send it).
    let fixtures = [
        (cs_source(), false, 0),
        (
            hex(include_str!("../fixtures/ru_the_ship_info.hex")),
            false,
            0,
        ),
        (
            hex(include_str!("../fixtures/ru_goldsource_info.hex")),
            false,
            1,
        ),
        (hex(include_str!("../fixtures/ru_rdkf_info.hex")), false, 0),
        (hex(include_str!("../fixtures/ru_players.hex")), true, 0),
    ];
    for (packet, is_players, optional) in fixtures {
        // Cut before the final required byte: at least one field is incomplete.
        for len in 0..packet.len() - optional {
            let cut = &packet[..len];
            let result = packet::reassemble(&[cut], None).and_then(|r| {
                if is_players {
                    // A cut between two entries reads as fewer players (the
                    // count includes unlisted ones); never as both.
                    a2s::decode_players(&r, false).map(|p| p.len() == 2)
                } else {
                    a2s::decode_info(&r).map(|_| true)
                }
            });
            assert!(!matches!(result, Ok(true)), "length {len} decoded");
        }
    }
}

#[test]
fn wrong_headers_and_types() {
    assert_eq!(
        packet::classify(&[0x78, 0x56, 0x34, 0x12, b'I']),
        Err(DecodeError::BadHeader(0x1234_5678))
    );
    assert_eq!(
        packet::classify(&[0xFF, 0xFF]),
        Err(DecodeError::Truncated("packet header"))
    );
    let info = cs_source();
    let reply = &info[4..];
    assert!(matches!(
        a2s::decode_rules(reply),
        Err(DecodeError::UnexpectedType { got: b'I', .. })
    ));
    assert!(matches!(
        a2s::decode_players(reply, false),
        Err(DecodeError::UnexpectedType { got: b'I', .. })
    ));
    assert!(matches!(
        a2s::decode_challenge(reply),
        Err(DecodeError::UnexpectedType { got: b'I', .. })
    ));
    assert_eq!(
        a2s::decode_info(&[]),
        Err(DecodeError::Truncated("reply type"))
    );
}

#[test]
fn packet_counts_over_fifteen_and_bad_numbers() {
    let p = split_packet(7, 16, 0, b"\xFF\xFF\xFF\xFFE\0\0");
    assert_eq!(
        packet::reassemble(&[&p], Some(SplitLayout::Source)),
        Err(DecodeError::BadPacketCount(16))
    );
    assert_eq!(
        packet::reassemble(&[&p], None),
        Err(DecodeError::UnknownLayout)
    );
    let p = split_packet(7, 2, 2, b"x");
    assert_eq!(
        packet::reassemble(&[&p], Some(SplitLayout::Source)),
        Err(DecodeError::BadPacketNumber {
            number: 2,
            total: 2
        })
    );
    let p = split_packet(7, 0, 0, b"x");
    assert_eq!(
        packet::reassemble(&[&p], Some(SplitLayout::Source)),
        Err(DecodeError::BadPacketCount(0))
    );
    // Two packets disagreeing on the count.
    let a = split_packet(7, 2, 0, b"\xFF\xFF\xFF\xFFE\x00\x00");
    let b = split_packet(7, 3, 1, b"");
    assert_eq!(
        packet::reassemble(&[&a, &b], Some(SplitLayout::Source)),
        Err(DecodeError::InconsistentCount)
    );
    // The same number twice with different contents.
    let b = split_packet(7, 2, 0, b"\xFF\xFF\xFF\xFFE\x01\x00");
    assert_eq!(
        packet::reassemble(&[&a, &b], Some(SplitLayout::Source)),
        Err(DecodeError::DuplicatePacket(0))
    );
}

#[test]
fn mismatched_ids() {
    let a = split_packet(7, 2, 0, b"\xFF\xFF\xFF\xFFE\x00\x00");
    let b = split_packet(8, 2, 1, b"");
    let mut r = Reassembler::new(None);
    assert_eq!(r.push(&a), Ok(None));
    assert_eq!(
        r.push(&b),
        Err(DecodeError::MismatchedId {
            expected: 7,
            got: 8
        })
    );
}

#[test]
fn uncompressed_reply_must_start_with_single_header() {
    let a = split_packet(7, 2, 0, b"\xFE\xFF\xFF\xFFE");
    let b = split_packet(7, 2, 1, b"\x00\x00");
    assert_eq!(
        packet::reassemble(&[&a, &b], Some(SplitLayout::Source)),
        Err(DecodeError::BadHeader(packet::SPLIT))
    );
}

fn compressed(reply: &[u8]) -> Vec<Vec<u8>> {
    packet::split(reply, 99, SplitLayout::Source, 40, true)
}

#[test]
fn compressed_replies_check_size_and_crc() {
    let mut whole = packet::SINGLE.to_le_bytes().to_vec();
    whole.extend_from_slice(b"E\x01\x00sv_gravity\x00800\x00");
    let ok = compressed(&whole);
    let refs: Vec<&[u8]> = ok.iter().map(Vec::as_slice).collect();
    let rules = a2s::decode_rules(&packet::reassemble(&refs, None).unwrap()).unwrap();
    assert_eq!(rules[0].value, "800");

    // Payload of packet 0 starts after 12 header bytes: size, then CRC.
    let mut bad_crc = ok.clone();
    bad_crc[0][16] ^= 0xFF;
    let refs: Vec<&[u8]> = bad_crc.iter().map(Vec::as_slice).collect();
    for layout in [None, Some(SplitLayout::Source)] {
        assert!(matches!(
            packet::reassemble(&refs, layout),
            Err(DecodeError::CrcMismatch { .. })
        ));
    }

    let mut bad_size = ok.clone();
    bad_size[0][12] = bad_size[0][12].wrapping_add(1);
    let refs: Vec<&[u8]> = bad_size.iter().map(Vec::as_slice).collect();
    assert!(matches!(
        packet::reassemble(&refs, Some(SplitLayout::Source)),
        Err(DecodeError::SizeMismatch { .. })
    ));

    let mut huge = ok.clone();
    huge[0][12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    let refs: Vec<&[u8]> = huge.iter().map(Vec::as_slice).collect();
    assert_eq!(
        packet::reassemble(&refs, Some(SplitLayout::Source)),
        Err(DecodeError::TooLarge(u64::from(u32::MAX)))
    );

    let mut corrupt = ok;
    let last = corrupt.len() - 1;
    let n = corrupt[last].len();
    corrupt[last][n - 3] ^= 0x55;
    let refs: Vec<&[u8]> = corrupt.iter().map(Vec::as_slice).collect();
    assert!(packet::reassemble(&refs, Some(SplitLayout::Source)).is_err());
}

#[test]
fn extra_data_flag_fields() {
    let mut p = cs_source();
    p.push(0x80 | 0x10 | 0x40 | 0x20 | 0x01);
    p.extend_from_slice(&27015u16.to_le_bytes());
    p.extend_from_slice(&90_071_992_547_409_920u64.to_le_bytes());
    p.extend_from_slice(&27020u16.to_le_bytes());
    p.extend_from_slice(b"SourceTV\0");
    p.extend_from_slice(b"alltalk,increased_maxplayers\0");
    p.extend_from_slice(&240u64.to_le_bytes());
    let info = a2s::decode_info(&p[4..]).unwrap();
    assert_eq!(info.edf, Some(0xF1));
    assert_eq!(info.port, Some(27015));
    assert_eq!(info.steam_id, Some(90_071_992_547_409_920));
    let tv = info.source_tv.unwrap();
    assert_eq!((tv.port, tv.name.as_str()), (27020, "SourceTV"));
    assert_eq!(
        info.keywords.as_deref(),
        Some("alltalk,increased_maxplayers")
    );
    assert_eq!(info.game_id, Some(240));

    // Only some flags: the others stay None.
    let mut q = cs_source();
    q.push(0x20);
    q.extend_from_slice(b"secure\0");
    let info = a2s::decode_info(&q[4..]).unwrap();
    assert_eq!(info.keywords.as_deref(), Some("secure"));
    assert_eq!((info.port, info.steam_id, info.game_id), (None, None, None));

    // A flag whose field is missing is an error.
    let mut r = cs_source();
    r.push(0x80);
    assert_eq!(
        a2s::decode_info(&r[4..]),
        Err(DecodeError::Truncated("EDF game port"))
    );
}

#[test]
fn rules_count_larger_than_the_rules() {
    assert_eq!(
        a2s::decode_rules(b"E\x02\x00a\x001\x00b\x00"),
        Err(DecodeError::Truncated("rule value"))
    );
    assert_eq!(
        a2s::decode_rules(b"E\x01\x00a\x001\x00junk"),
        Err(DecodeError::TrailingBytes(4))
    );
    assert_eq!(a2s::decode_rules(b"E\x00\x00"), Ok(vec![]));
}

// ---- GameAgent ------------------------------------------------------------

#[test]
fn gameagent_seed_status() {
    // GameAgent's documented example reply, as the engine formats it
    // (`docs/protocol.md` §5.2).
    let reply = b"0;players;8;maxplayers;16;level;Yodeller;gametype;Fragmatch;version;1.10;gamename;serioussamse;sessionname;Awesome Server";
    let s = gameagent::decode_status(reply).unwrap();
    assert_eq!((s.players, s.max_players), (8, 16));
    assert_eq!(s.level, "Yodeller");
    assert_eq!(s.game_type, "Fragmatch");
    assert_eq!(s.version, "1.10");
    assert_eq!(s.game_name, "serioussamse");
    assert_eq!(s.session_name, "Awesome Server");
    assert_eq!(s.keys.len(), 7);
    assert_eq!(gameagent::encode_status(&s), reply.to_vec());

    // The session name is last and may contain ';'.
    let s = gameagent::decode_status(
        b"0;players;0;maxplayers;4;level;A;gametype;B;version;1;gamename;g;sessionname;Sam; the ;best;",
    )
    .unwrap();
    assert_eq!(s.session_name, "Sam; the ;best;");
    // Latin-1 names survive.
    let s = gameagent::decode_status(b"0;players;1;maxplayers;2;sessionname;K\xF6ln").unwrap();
    assert_eq!(s.session_name, "K\u{f6}ln");
}

#[test]
fn gameagent_bad_status() {
    assert!(gameagent::decode_status(b"").is_err());
    assert!(gameagent::decode_status(b"1;players;2;maxplayers;3").is_err());
    assert_eq!(
        gameagent::decode_status(b"0;maxplayers;3"),
        Err(DecodeError::Missing("players"))
    );
    assert!(matches!(
        gameagent::decode_status(b"0;players;x;maxplayers;3"),
        Err(DecodeError::InvalidField {
            field: "players",
            ..
        })
    ));
    assert_eq!(
        gameagent::decode_status(b"0;players"),
        Err(DecodeError::Truncated("status value"))
    );
}

#[test]
fn gameagent_master_list() {
    // 's', then 127.0.0.1:25600 and 10.0.0.2:25700, ports little-endian.
    let mut reply = vec![b's', 127, 0, 0, 1];
    reply.extend_from_slice(&25600u16.to_le_bytes());
    reply.extend_from_slice(&[10, 0, 0, 2]);
    reply.extend_from_slice(&25700u16.to_le_bytes());
    let list = gameagent::decode_master_list(&reply).unwrap();
    assert_eq!(
        list,
        vec![
            "127.0.0.1:25600".parse().unwrap(),
            "10.0.0.2:25700".parse().unwrap()
        ]
    );
    assert_eq!(gameagent::query_port(list[0].port()), 25601);
    // The fakes' encoder writes exactly this.
    assert_eq!(gameagent::encode_master_list(&list), reply);
    assert_eq!(gameagent::decode_master_list(b"s"), Ok(vec![]));
    assert_eq!(
        gameagent::decode_master_list(&reply[..10]),
        Err(DecodeError::TrailingBytes(3))
    );
    assert!(matches!(
        gameagent::decode_master_list(b"x"),
        Err(DecodeError::UnexpectedType { got: b'x', .. })
    ));
}

#[test]
fn gameagent_seed_players_and_invalid_names() {
    let one = b"\x01players\x028\x03player_0\x02Angelo\x03frags_0\x0214\x03ping_0\x0280\x03\x04";
    let players = gameagent::decode_players(&[one]).unwrap();
    assert_eq!(
        players,
        vec![gameagent::Player {
            index: 0,
            name: Some("Angelo".into()),
            frags: 14,
            ping: 80
        }]
    );
    let bad = b"\x01players\x022\x03player_3\x02\x11\x03frags_3\x02-2\x03ping_3\x025\x03player_5\x02\x12\x03frags_5\x020\x03ping_5\x020\x03\x04";
    let players = gameagent::decode_players(&[bad]).unwrap();
    assert_eq!(players.len(), 2);
    assert_eq!(players[0].name, None);
    assert_eq!(players[0].frags, -2);
    assert_eq!(players[1].index, 5);
    assert_eq!(players[1].name, None);
}

#[test]
fn gameagent_players_over_several_packets_in_any_order() {
    let players: Vec<_> = (0..40)
        .map(|i| gameagent::Player {
            index: i * 2,
            name: Some(format!("Serious Sam number {i}")),
            frags: i as i32 - 3,
            ping: 20 + i,
        })
        .collect();
    let packets = gameagent::encode_players(40, &players, 1024);
    assert!(packets.len() >= 3, "{}", packets.len());
    assert!(packets[1..].iter().all(|p| p[0] != 0x01));
    assert!(packets[..packets.len() - 1]
        .iter()
        .all(|p| p.last() != Some(&0x04)));
    let mut refs: Vec<&[u8]> = packets.iter().map(Vec::as_slice).collect();
    assert_eq!(gameagent::decode_players(&refs).unwrap(), players);
    refs.reverse();
    assert_eq!(gameagent::decode_players(&refs).unwrap(), players);
    // Without its last packet the reply is incomplete.
    assert_eq!(
        gameagent::decode_players(&refs[1..]),
        Err(DecodeError::Missing("first or last player packet"))
    );
}

#[test]
fn gameagent_bad_players_and_ping() {
    assert!(gameagent::decode_players(&[b"\x01players\x02x\x03\x04"]).is_err());
    assert!(gameagent::decode_players(&[b"\x01teams\x021\x03\x04"]).is_err());
    assert!(gameagent::decode_players(&[b"\x01players\x021\x03player_0\x02Sam"]).is_err());
    assert!(
        gameagent::decode_players(&[b"\x01players\x020\x03\x04", b"\x01players\x020\x03"]).is_ok()
    );
    assert_eq!(gameagent::decode_ping(b"\x0412"), Ok(12));
    assert!(gameagent::decode_ping(b"\x04").is_err());
    assert!(gameagent::decode_ping(b"\x0512").is_err());
}

// ---- Fuzzing ----------------------------------------------------------------

fn run_every_decoder(bytes: &[u8]) {
    let _ = packet::classify(bytes);
    for layout in [
        None,
        Some(SplitLayout::Source),
        Some(SplitLayout::SourceNoSize),
        Some(SplitLayout::GoldSource),
    ] {
        let _ = packet::reassemble(&[bytes], layout);
    }
    let _ = a2s::decode_info(bytes);
    let _ = a2s::decode_players(bytes, false);
    let _ = a2s::decode_players(bytes, true);
    let _ = a2s::decode_rules(bytes);
    let _ = a2s::decode_challenge(bytes);
    let _ = gameagent::decode_master_list(bytes);
    let _ = gameagent::decode_status(bytes);
    let _ = gameagent::decode_ping(bytes);
    let _ = gameagent::decode_players(&[bytes]);
}

fn seed_replies() -> Vec<Vec<u8>> {
    [
        include_str!("../fixtures/ru_cs_source_info.hex"),
        include_str!("../fixtures/ru_the_ship_info.hex"),
        include_str!("../fixtures/ru_goldsource_info.hex"),
        include_str!("../fixtures/ru_the_ship_players.hex"),
        include_str!("../fixtures/ru_rules_split_0.hex"),
        include_str!("../fixtures/ru_rules_split_1.hex"),
    ]
    .into_iter()
    .map(hex)
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        run_every_decoder(&bytes);
        // With the A2S headers in front, the decoders get further.
        for prefix in [&[0xFF, 0xFF, 0xFF, 0xFF][..], &[0xFE, 0xFF, 0xFF, 0xFF][..], b"\xFF\xFF\xFF\xFFI", b"\x01players\x02"] {
            let mut p = prefix.to_vec();
            p.extend_from_slice(&bytes);
            run_every_decoder(&p);
        }
    }

    #[test]
    fn mutated_seed_packets_never_panic(
        which in 0usize..6,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut p = seed_replies().swap_remove(which);
        for (at, b) in edits {
            let n = p.len();
            p[at % n] = b;
        }
        let keep = cut % (p.len() + 1);
        p.truncate(keep);
        run_every_decoder(&p);
        if p.len() > 4 {
            run_every_decoder(&p[4..]);
        }
    }

    #[test]
    fn arbitrary_split_sequences_never_panic(
        packets in proptest::collection::vec(
            (0u32..3, any::<u8>(), any::<u8>(), proptest::collection::vec(any::<u8>(), 0..40)),
            1..20,
        ),
        layout in 0usize..4,
    ) {
        let layout = [None, Some(SplitLayout::Source), Some(SplitLayout::SourceNoSize), Some(SplitLayout::GoldSource)][layout];
        let mut r = Reassembler::new(layout);
        for (id, a, b, body) in packets {
            let mut p = packet::SPLIT.to_le_bytes().to_vec();
            p.extend_from_slice(&(id | if a & 1 == 1 { 0x8000_0000 } else { 0 }).to_le_bytes());
            p.extend_from_slice(&[a % 17, b % 17]);
            p.extend_from_slice(&body);
            if r.push(&p).is_err() {
                r = Reassembler::new(layout);
            }
        }
    }

    #[test]
    fn split_then_reassemble_round_trips(
        body in proptest::collection::vec(any::<u8>(), 0..3000),
        chunk in 200usize..1400,
        layout in 0usize..3,
        compress in any::<bool>(),
        rotate in any::<usize>(),
    ) {
        let layout = SplitLayout::ALL[layout];
        let mut whole = packet::SINGLE.to_le_bytes().to_vec();
        whole.extend_from_slice(&body);
        let mut parts = packet::split(&whole, 5, layout, chunk, compress);
        prop_assume!(parts.len() <= 15);
        let n = parts.len();
        parts.rotate_left(rotate % n);
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        prop_assert_eq!(packet::reassemble(&refs, Some(layout)), Ok(body));
    }
}
