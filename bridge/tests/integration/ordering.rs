//! With a remote master, the poller's and the admins' replies race: a list
//! asked for before an admin's change must not replace the list that has
//! it. A scripted master holds the poller's reply until the admin's fresher
//! one went out; viewers must never go back to the older list.

use crate::common;

use std::net::Ipv4Addr;

use common::*;
use lobby_testkit::fake_master::{frame, list_reply, listed, Answer, FakeMaster};
use protocol::{
    delta::{ClientList, DeltaMessage},
    message::Envelope,
};

/// Before the admin's change.
const BEFORE: &[&str] = &[];
/// With the admin's change.
const AFTER: &[&str] = &["Fresh"];
/// A later poll, with one more server: the list after the stale reply.
const LATER: &[&str] = &["Fresh", "Later"];

/// A master whose first connection (the bridge's poller) gets [`BEFORE`],
/// then its second query held until the test lets it go and answered
/// [`BEFORE`], then [`LATER`]; every other connection (an admin's) gets
/// [`AFTER`].
async fn scripted_master() -> FakeMaster {
    let reply = |names: &[&str]| {
        let servers: Vec<_> = names.iter().map(|n| listed(n, 20000, 1)).collect();
        frame(&list_reply(&servers))
    };
    let (before, after, later) = (reply(BEFORE), reply(AFTER), reply(LATER));
    FakeMaster::start(Ipv4Addr::LOCALHOST.into(), move |asked| {
        match (asked.connection, asked.query) {
            (0, 0) => Answer::Write(before.clone()),
            // Asked before the admin's change reached the master; answered
            // after the admin's connection had the change.
            (0, 1) => Answer::Hold(before.clone()),
            (0, _) => Answer::Write(later.clone()),
            _ => Answer::Write(after.clone()),
        }
    })
    .await
}

fn str_vec(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// The server names of the next whole list a plain subscriber gets.
async fn next_list(ws: &mut Ws) -> Vec<String> {
    names(&recv_until(ws, is_list).await)
}

/// The delta subscriber's list after its next snapshot or delta.
async fn next_state(ws: &mut Ws, list: &mut Option<ClientList>) -> Vec<String> {
    loop {
        let text = recv_text(ws).await;
        let env = Envelope::parse(text.as_bytes()).unwrap();
        let Some(msg) = DeltaMessage::from_frame(&env.command, &text) else {
            continue;
        };
        match msg.unwrap_or_else(|e| panic!("{e}: {text}")) {
            DeltaMessage::Snapshot(s) => *list = Some(ClientList::from_snapshot(s)),
            DeltaMessage::Delta(d) => list
                .as_mut()
                .expect("a delta before the snapshot")
                .apply(&d)
                .unwrap_or_else(|e| panic!("{e}: {text}")),
        }
        let mut names: Vec<String> = list
            .as_ref()
            .unwrap()
            .servers()
            .into_iter()
            .map(|s| s.name)
            .collect();
        names.sort();
        return names;
    }
}

#[tokio::test]
async fn a_reply_asked_before_the_published_list_is_dropped() {
    let master = scripted_master().await;
    let mut config = test_config(master.addr);
    // The poller's held query must not time out while the admin acts.
    config.master_timeout = HUNG;
    let bridge = TestBridge::start(config).await;

    // The poller's first list is published; its second query is held.
    master.until_held(1).await;
    let mut plain = bridge.connect().await;
    send(&mut plain, r#"{"command":"bridgeSubscribe"}"#).await;
    assert_eq!(next_list(&mut plain).await, BEFORE);
    let mut deltas = bridge.connect().await;
    send(
        &mut deltas,
        r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#,
    )
    .await;
    let mut list = None;
    assert_eq!(next_state(&mut deltas, &mut list).await, BEFORE);

    // The admin's change: its own connection's fresher list is published.
    let mut admin = bridge.admin().await;
    send(&mut admin, &register_json("Fresh", 20000)).await;
    // The poller's first answer, then the admin connection's.
    master.until_answered(2).await;
    assert_eq!(next_list(&mut plain).await, AFTER);
    assert_eq!(next_state(&mut deltas, &mut list).await, AFTER);

    // Now the poller's older reply arrives, then a later poll's list.
    master.release();
    // Both read before asserting, so a failure shows what each saw.
    let seen = (
        next_list(&mut plain).await,
        next_state(&mut deltas, &mut list).await,
    );
    assert_eq!(
        seen,
        (str_vec(LATER), str_vec(LATER)),
        "(plain, delta) subscribers went back to the list from before the admin's change"
    );
    let (status, _, body) = http_get(bridge.addr, "/metrics", "").await;
    assert_eq!(status, 200);
    let body = String::from_utf8(body).unwrap();
    assert!(
        body.contains("\nbridge_stale_lists_dropped_total 1\n"),
        "{body}"
    );
    drop(admin);
    bridge.shutdown().await;
}
