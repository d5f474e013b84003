//! Valve A2S: datagram framing and split-reply reassembly
//! (`gamequery::packet`) and the reply decoders (`gamequery::a2s`).

use gamequery::{
    a2s,
    packet::{self, Reassembler, SplitLayout},
};

use crate::input::parts;

/// The layout a flags byte names: `None` lets the reassembler try each.
fn layout(flags: u8) -> Option<SplitLayout> {
    match flags & 3 {
        0 => None,
        1 => Some(SplitLayout::Source),
        2 => Some(SplitLayout::SourceNoSize),
        _ => Some(SplitLayout::GoldSource),
    }
}

/// Every decoder a reply may reach, as the client calls them.
fn decode_reply(reply: &[u8], the_ship: bool) {
    let _ = a2s::reply_type(reply);
    let _ = a2s::decode_challenge(reply);
    let _ = a2s::decode_info(reply);
    if let Ok(players) = a2s::decode_players(reply, the_ship) {
        assert!(players.len() <= usize::from(u8::MAX));
    }
    if let Ok(rules) = a2s::decode_rules(reply) {
        assert!(rules.len() <= usize::from(u16::MAX));
    }
}

/// Input: a flags byte (bits 0-1 the split layout, bit 2 The Ship, bit 3
/// a round trip), then the datagrams of one reply in
/// [`crate::input::parts`] form.
///
/// Checks: no decoder panics, on each datagram's bytes and on the
/// reassembled reply; a reply is whole only once, and a reassembled reply
/// is bounded by the decompression limit; and with bit 3 the datagrams' bytes
/// are taken as a reply, split by [`packet::split`] in the chosen layout
/// and reassembled into the same bytes.
pub fn a2s(data: &[u8]) {
    let [flags, rest @ ..] = data else { return };
    let the_ship = flags & 4 != 0;
    let datagrams = parts(rest, 32);
    let mut reassembler = Reassembler::new(layout(*flags));
    for datagram in &datagrams {
        decode_reply(datagram, the_ship);
        if let Ok(packet::Datagram::Single(reply)) = packet::classify(datagram) {
            decode_reply(reply, the_ship);
        }
        match reassembler.push(datagram) {
            Ok(Some(reply)) => {
                assert!(reply.len() as u64 <= packet::MAX_DECOMPRESSED.max(rest.len() as u64));
                decode_reply(&reply, the_ship);
                break;
            }
            Ok(None) => {}
            // The client gives up on the attempt.
            Err(_) => break,
        }
    }
    let _ = packet::reassemble(&datagrams, layout(*flags));
    if flags & 8 != 0 {
        round_trip(rest, layout(*flags).unwrap_or(SplitLayout::Source), *flags);
    }
}

/// A reply split as a server would split it reassembles to itself, in any
/// order (here: reversed) and with the layout known or guessed.
fn round_trip(body: &[u8], layout: SplitLayout, flags: u8) {
    let mut reply = packet::SINGLE.to_le_bytes().to_vec();
    reply.extend_from_slice(body);
    // At most 15 packets; smaller chunks when the flags ask.
    let chunk = reply
        .len()
        .div_ceil(usize::from(packet::MAX_PACKETS))
        .max(usize::from(flags >> 4));
    let packets = packet::split(&reply, 0x1234_5678, layout, chunk, false);
    let mut refs: Vec<&[u8]> = packets.iter().map(Vec::as_slice).collect();
    refs.reverse();
    assert_eq!(packet::reassemble(&refs, Some(layout)).as_deref(), Ok(body));
    if layout != SplitLayout::Source {
        // Source is tried first; the others' headers may also read as a
        // layout tried before theirs.
        return;
    }
    if let Ok(got) = packet::reassemble(&refs, None) {
        assert_eq!(got, body);
    }
}
