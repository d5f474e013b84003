//! Serious Engine's GameAgent decoders (`gamequery::gameagent`): the
//! master's list, status, ping and multi-packet player replies.

use gamequery::gameagent::{self, MAX_PLAYER_PACKETS};

use crate::input::parts;

/// Input: a flags byte (the packet size of the player round trip), then
/// the datagrams in [`crate::input::parts`] form; the first datagram also
/// goes to the single-packet decoders.
///
/// Checks: no decoder panics; a master list re-encodes to the same bytes;
/// a status re-encodes to one that reads back with the same fields; and
/// players read from packets, re-encoded as the engine would, read back
/// the same.
pub fn gameagent(data: &[u8]) {
    let [flags, rest @ ..] = data else { return };
    let packets = parts(rest, MAX_PLAYER_PACKETS + 2);
    for datagram in packets.iter().take(1).chain([&rest]) {
        single(datagram);
    }
    if let Ok(players) = gameagent::decode_players(&packets) {
        assert!(players.len() <= 4096);
        let count = u32::try_from(players.len()).unwrap_or(u32::MAX);
        let limit = 64 + 32 * usize::from(*flags);
        let encoded = gameagent::encode_players(count, &players, limit);
        if encoded.len() <= MAX_PLAYER_PACKETS {
            let refs: Vec<&[u8]> = encoded.iter().map(Vec::as_slice).collect();
            assert_eq!(
                gameagent::decode_players(&refs).as_ref(),
                Ok(&players),
                "players do not read back"
            );
        }
    }
}

fn single(datagram: &[u8]) {
    if let Ok(list) = gameagent::decode_master_list(datagram) {
        assert_eq!(gameagent::encode_master_list(&list), datagram);
    }
    if let Ok(status) = gameagent::decode_status(datagram) {
        let again = gameagent::decode_status(&gameagent::encode_status(&status))
            .expect("an encoded status reads back");
        assert_eq!(
            (
                again.players,
                again.max_players,
                &again.level,
                &again.game_type,
                &again.version,
                &again.game_name,
                &again.session_name
            ),
            (
                status.players,
                status.max_players,
                &status.level,
                &status.game_type,
                &status.version,
                &status.game_name,
                &status.session_name
            )
        );
    }
    let _ = gameagent::decode_ping(datagram);
}
