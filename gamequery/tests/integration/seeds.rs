//! The packet dumps of the seeds (the Russian and Japanese descriptions of
//! A2S, see `tests/fixtures/README.md`), decoded field by field. The
//! fixtures are their hex dumps, copied verbatim (one file per packet).

use gamequery::{
    a2s::{self, Environment, InfoFormat, ServerType},
    packet::{self, Datagram, SplitLayout},
    DecodeError,
};

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

macro_rules! fixture {
    ($name:literal) => {
        hex(include_str!(concat!("../fixtures/", $name, ".hex")))
    };
}

/// The reply inside a single (`-1`) packet.
fn single(packet: &[u8]) -> &[u8] {
    match packet::classify(packet).unwrap() {
        Datagram::Single(reply) => reply,
        Datagram::Split(_) => panic!("split packet"),
    }
}

#[test]
fn requests_are_byte_exact() {
    assert_eq!(a2s::info_request(None), fixture!("ru_info_request"));
    assert_eq!(a2s::info_request(None), fixture!("ja_info_request"));
    let challenge = a2s::decode_challenge(single(&fixture!("ru_info_challenge"))).unwrap();
    assert_eq!(challenge, i32::from_le_bytes([0x0A, 0x08, 0x5E, 0xEA]));
    assert_eq!(
        a2s::info_request(Some(challenge)),
        fixture!("ru_info_request_challenge")
    );

    assert_eq!(
        a2s::players_request(a2s::NO_CHALLENGE),
        fixture!("ru_player_challenge_request")
    );
    let challenge = a2s::decode_challenge(single(&fixture!("ru_player_challenge"))).unwrap();
    assert_eq!(challenge, 0x22D5_A14B);
    assert_eq!(
        a2s::players_request(challenge),
        fixture!("ru_player_request")
    );

    assert_eq!(
        a2s::rules_request(a2s::NO_CHALLENGE),
        fixture!("ru_rules_challenge_request")
    );
    let challenge = a2s::decode_challenge(single(&fixture!("ru_rules_challenge"))).unwrap();
    assert_eq!(a2s::rules_request(challenge), fixture!("ru_rules_request"));

    // A2S_SERVERQUERY_GETCHALLENGE replies ('A') read the same way.
    assert_eq!(
        a2s::decode_challenge(single(&fixture!("ru_getchallenge_reply"))).unwrap(),
        0x22D5_A14B
    );
    assert_eq!(
        a2s::decode_challenge(single(&fixture!("ja_getchallenge_reply"))).unwrap(),
        i32::from_le_bytes(*b"2BYE")
    );
}

fn check_cs_source(packet: &[u8]) {
    let info = a2s::decode_info(single(packet)).unwrap();
    assert_eq!(info.format, InfoFormat::Source);
    assert_eq!(info.protocol, 2);
    assert_eq!(info.name, "game2xs.com Counter-Strike Source #1");
    assert_eq!(info.map, "de_dust");
    assert_eq!(info.folder, "cstrike");
    assert_eq!(info.game, "Counter-Strike: Source");
    assert_eq!(info.app_id, Some(240));
    assert_eq!((info.players, info.max_players, info.bots), (5, 16, 4));
    assert_eq!(info.server_type, ServerType::Dedicated);
    assert_eq!(info.environment, Environment::Linux);
    assert!(!info.password);
    assert!(!info.vac);
    assert_eq!(info.version.as_deref(), Some("1.0.0.22"));
    assert_eq!(info.the_ship, None);
    assert_eq!(info.edf, None);
    assert_eq!(info.address, None);
}

#[test]
fn counter_strike_source_info() {
    check_cs_source(&fixture!("ru_cs_source_info"));
    check_cs_source(&fixture!("ja_cs_source_info"));
}

#[test]
fn the_ship_info() {
    let info = a2s::decode_info(single(&fixture!("ru_the_ship_info"))).unwrap();
    assert_eq!(info.protocol, 7);
    assert_eq!(info.name, "Ship Server");
    assert_eq!(info.map, "batavier");
    assert_eq!(info.folder, "ship");
    assert_eq!(info.game, "The Ship");
    assert_eq!(info.app_id, Some(2400));
    assert_eq!((info.players, info.max_players, info.bots), (1, 5, 0));
    assert_eq!(info.server_type, ServerType::NonDedicated);
    assert_eq!(info.environment, Environment::Windows);
    assert!(!info.password && !info.vac);
    let ship = info.the_ship.unwrap();
    assert_eq!((ship.mode, ship.witnesses, ship.duration), (1, 3, 3));
    assert_eq!(info.version.as_deref(), Some("1.0.0.4"));
    assert_eq!(info.edf, None);
}

#[test]
fn sin1_info() {
    let info = a2s::decode_info(single(&fixture!("ru_sin1_info"))).unwrap();
    assert_eq!(info.protocol, 0x2F);
    assert_eq!(info.name, "Sensemann SiN DM");
    assert_eq!(info.map, "paradox");
    assert_eq!(info.folder, "SiN 1");
    assert_eq!(info.game, "SiN 1");
    assert_eq!(info.app_id, Some(1309));
    assert_eq!((info.players, info.max_players, info.bots), (0, 16, 0));
    assert_eq!(info.server_type, ServerType::NonDedicated);
    assert_eq!(info.environment, Environment::Windows);
    assert!(!info.password && !info.vac);
    assert_eq!(info.version.as_deref(), Some("1.0.0.0"));
    assert_eq!(info.the_ship, None);
}

#[test]
fn rag_doll_kung_fu_info() {
    let info = a2s::decode_info(single(&fixture!("ru_rdkf_info"))).unwrap();
    assert_eq!(info.protocol, 0xFC);
    assert_eq!(info.name, "The Dude's dojo");
    assert_eq!(info.map, "Soccer");
    assert_eq!(info.folder, "RDKFSoccer");
    assert_eq!(info.game, "RagDollKungFu: Soccer");
    assert_eq!(info.app_id, Some(1002));
    assert_eq!((info.players, info.max_players, info.bots), (1, 4, 0));
    // Rag Doll Kung Fu always sends 0 as the server type.
    assert_eq!(info.server_type, ServerType::Unknown);
    assert_eq!(info.environment, Environment::Windows);
    assert!(!info.password && !info.vac);
    assert_eq!(info.version.as_deref(), Some("2.3.0.0"));
}

#[test]
fn goldsource_info() {
    let info = a2s::decode_info(single(&fixture!("ru_goldsource_info"))).unwrap();
    assert_eq!(info.format, InfoFormat::GoldSource);
    assert_eq!(info.address.as_deref(), Some("77.111.194.110:27015"));
    assert_eq!(
        info.name,
        "FR - VeryGames.net - Deatmatch - only surf_ski - ngR"
    );
    assert_eq!(info.map, "surf_ski");
    assert_eq!(info.folder, "cstrike");
    assert_eq!(info.game, "Counter-Strike");
    assert_eq!((info.players, info.max_players), (12, 18));
    assert_eq!(info.protocol, 47);
    assert_eq!(info.server_type, ServerType::Dedicated);
    assert_eq!(info.environment, Environment::Linux);
    assert!(!info.password);
    let m = info.goldsource_mod.unwrap();
    assert_eq!(m.link, "www.counter-strike.net");
    assert_eq!(m.download_link, "");
    assert_eq!(m.version, 1);
    assert_eq!(m.size, 184_000_000);
    assert!(!m.multiplayer_only);
    assert!(m.own_dll);
    assert!(info.vac);
    assert_eq!(info.bots, 0);
    assert_eq!(info.app_id, None);
    assert_eq!(info.version, None);
}

/// HLTV proxies and old servers end the `'m'` reply after the VAC byte:
/// no bot count, read as 0 bots, the rest as with it.
#[test]
fn goldsource_info_without_the_bots_byte() {
    let packet = fixture!("ru_goldsource_info");
    let full = single(&packet);
    let mut with_bots = full.to_vec();
    *with_bots.last_mut().unwrap() = 3;
    let with_bots = a2s::decode_info(&with_bots).unwrap();
    assert_eq!(with_bots.bots, 3);

    let short = &full[..full.len() - 1];
    let info = a2s::decode_info(short).expect("an 'm' reply without the bots byte");
    assert_eq!(info.bots, 0);
    assert!(info.vac);
    assert_eq!(info, a2s::decode_info(full).unwrap());
    // One byte less (no VAC byte either) is still malformed.
    assert!(a2s::decode_info(&full[..full.len() - 2]).is_err());
}

#[test]
fn players() {
    let players = a2s::decode_players(single(&fixture!("ru_players")), false).unwrap();
    assert_eq!(players.len(), 2);
    assert_eq!(players[0].index, 1);
    assert_eq!(players[0].name, "[D]---->T.N.W<----");
    assert_eq!(players[0].score, 14);
    assert_eq!(players[0].duration, f32::from_bits(0x4400_97B4));
    assert!((players[0].duration - 514.37).abs() < 0.01);
    assert_eq!(players[1].index, 2);
    assert_eq!(players[1].name, "Killer !!!");
    assert_eq!(players[1].score, 5);
    assert!((players[1].duration - 434.284).abs() < 0.01);
    assert_eq!(players[1].deaths, None);
}

#[test]
fn the_ship_players() {
    let packet = fixture!("ru_the_ship_players");
    let reply = single(&packet);
    // The count byte says 19 (connecting players count too); 6 are listed.
    assert_eq!(reply[1], 19);
    let players = a2s::decode_players(reply, true).unwrap();
    let names: Vec<_> = players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Shipmate1",
            "Shipmate2",
            "Shipmate3",
            "Shipmate4",
            "Shipmate5",
            "(1)LandLubber"
        ]
    );
    let indexes: Vec<_> = players.iter().map(|p| p.index).collect();
    assert_eq!(indexes, [0, 1, 2, 3, 4, 7]);
    for p in &players[..5] {
        assert_eq!(p.score, 0);
        assert_eq!(p.duration, -1.0);
    }
    assert!((players[5].duration - 3720.93).abs() < 0.01);
    for p in &players {
        assert_eq!(p.deaths, Some(0));
        assert_eq!(p.money, Some(2500));
    }
}

fn check_rules(reply: &[u8]) {
    let rules = a2s::decode_rules(reply).unwrap();
    assert_eq!(rules.len(), 0x5D);
    let get = |n: &str| {
        rules
            .iter()
            .find(|r| r.name == n)
            .map(|r| r.value.as_str())
            .unwrap_or_else(|| panic!("no rule {n}"))
    };
    assert_eq!(rules[0].name, "_tutor_bomb_viewable_check_interval");
    assert_eq!(rules[0].value, "0.5");
    assert_eq!(get("amx_nextmap"), "de_aztec");
    assert_eq!(get("amxmodx_version"), "1.76d");
    assert_eq!(get("mp_startmoney"), "800");
    assert_eq!(get("sv_clipmode"), "0");
    // Split across the two packets: "sv_conta" + "ct", with an empty value.
    assert_eq!(get("sv_contact"), "");
    assert_eq!(get("sv_friction"), "4");
    assert_eq!(get("sv_gravity"), "750");
    let last = rules.last().unwrap();
    assert_eq!(
        (last.name.as_str(), last.value.as_str()),
        ("sv_waterfriction", "1")
    );
}

#[test]
fn goldsource_split_rules_in_any_order_and_layout_detection() {
    let p0 = fixture!("ru_rules_split_0");
    let p1 = fixture!("ru_rules_split_1");
    for layout in [None, Some(SplitLayout::GoldSource)] {
        check_rules(&packet::reassemble(&[&p0, &p1], layout).unwrap());
        check_rules(&packet::reassemble(&[&p1, &p0], layout).unwrap());
        // A duplicate is harmless.
        check_rules(&packet::reassemble(&[&p1, &p1, &p0], layout).unwrap());
    }
    // Read as Source, the second packet claims 0x12 = 18 packets.
    assert_eq!(
        packet::reassemble(&[&p1, &p0], Some(SplitLayout::Source)),
        Err(DecodeError::BadPacketCount(18))
    );
    // One packet alone is not a reply.
    assert_eq!(
        packet::reassemble(&[&p0], None),
        Err(DecodeError::Missing("split packets"))
    );
}

#[test]
fn same_rules_resplit_as_source_with_compression() {
    let reply = packet::reassemble(
        &[&fixture!("ru_rules_split_0"), &fixture!("ru_rules_split_1")],
        None,
    )
    .unwrap();
    let mut whole = packet::SINGLE.to_le_bytes().to_vec();
    whole.extend_from_slice(&reply);
    for layout in SplitLayout::ALL {
        for compress in [false, true] {
            let mut parts = packet::split(&whole, 0x1234, layout, 300, compress);
            parts.reverse();
            let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            check_rules(&packet::reassemble(&refs, None).unwrap());
            check_rules(&packet::reassemble(&refs, Some(layout)).unwrap());
        }
    }
}

#[test]
fn ping_replies_are_not_a2s_replies() {
    // A2A_PING is obsolete and not queried; its replies are refused cleanly.
    for p in [fixture!("ru_ping_goldsource"), fixture!("ru_ping_source")] {
        assert!(matches!(
            a2s::decode_info(single(&p)),
            Err(DecodeError::UnexpectedType { got: b'j', .. })
        ));
    }
}
