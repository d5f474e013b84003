//! WebSocket text frames: the bridge's [`Inbound::classify`] of what a
//! browser sends, and the page's readers of what the bridge sends
//! ([`BridgeMessage::from_frame`], [`DeltaMessage::from_frame`]).

use protocol::{
    bridge::{names as bridge_names, BridgeMessage, Inbound},
    delta::{delta_json, snapshot_json, Changeset, DeltaMessage},
    message::{names, Envelope},
};

/// Input: one text frame (any bytes; the readers that take `&str` get it
/// only when it is UTF-8).
///
/// Checks: a frame classified as a bridge message is written back by
/// `to_json` as a frame classified the same; an admin frame names an `ms`
/// command other than the open query; and every message the page's readers
/// accept is written by the bridge's writers as text they read back the
/// same.
pub fn inbound(data: &[u8]) {
    match Inbound::classify(data) {
        Ok(Inbound::Bridge(msg)) => {
            let json = msg.to_json();
            assert_eq!(
                Inbound::classify(json.as_bytes()),
                Ok(Inbound::Bridge(msg)),
                "{json} does not read back"
            );
        }
        Ok(Inbound::Admin { command }) => {
            assert!(command.starts_with("ms") && command != names::QUERY);
        }
        Ok(Inbound::Query) => {}
        Err(refusal) => assert!(!refusal.message.is_empty()),
    }
    let (Ok(text), Ok(env)) = (std::str::from_utf8(data), Envelope::parse(data)) else {
        return;
    };
    if let Some(Ok(msg)) = BridgeMessage::from_frame(&env.command, text) {
        let json = msg.to_json();
        let back = Envelope::parse(json.as_bytes()).expect("the bridge writes an envelope");
        assert_eq!(
            BridgeMessage::from_frame(&back.command, &json).map(Result::ok),
            Some(Some(msg))
        );
    }
    match DeltaMessage::from_frame(&env.command, text) {
        Some(Ok(DeltaMessage::Snapshot(s))) => {
            let json = snapshot_json(&s.epoch, s.seq, &s.servers, protocol::Addresses::Shown);
            let back = DeltaMessage::from_frame(bridge_names::SNAPSHOT, &json).map(Result::ok);
            assert_eq!(back, Some(Some(DeltaMessage::Snapshot(s))));
        }
        Some(Ok(DeltaMessage::Delta(d))) => {
            let change = Changeset {
                upsert: d.upsert.clone(),
                remove: d.remove.clone(),
            };
            let json = delta_json(&d.epoch, d.seq, d.prev, &change, protocol::Addresses::Shown);
            let back = DeltaMessage::from_frame(bridge_names::DELTA, &json).map(Result::ok);
            assert_eq!(back, Some(Some(DeltaMessage::Delta(d))));
        }
        _ => {}
    }
}
