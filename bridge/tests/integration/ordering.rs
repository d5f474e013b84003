//! With a remote master, the poller's and the admins' replies race: a list
//! asked for before an admin's change must not replace the list that has
//! it. A scripted master holds the poller's reply until the admin's fresher
//! one went out; viewers must never go back to the older list.

use crate::common;

use std::net::SocketAddr;

use common::*;
use futures_util::{SinkExt, StreamExt};
use protocol::{
    codec::{Frame, FrameCodec},
    delta::{ClientList, DeltaMessage},
    message::Envelope,
};
use tokio::{
    net::{TcpListener, TcpStream},
    sync::{mpsc, oneshot},
};
use tokio_util::codec::Framed;

/// Before the admin's change.
const BEFORE: &[&str] = &[];
/// With the admin's change.
const AFTER: &[&str] = &["Fresh"];
/// A later poll, with one more server: the list after the stale reply.
const LATER: &[&str] = &["Fresh", "Later"];

fn list_json(names: &[&str]) -> String {
    let servers: Vec<String> = names
        .iter()
        .map(|n| {
            format!(
                r#"{{"name":"{n}","address":"192.168.0.10","port":20000,"players":{{"current":1,"max":4}},"isLobbyOpen":true,"gameplayMode":1}}"#
            )
        })
        .collect();
    format!(
        r#"{{"command":"msRQueryGameServers","content":{{"servers":[{}]}}}}"#,
        servers.join(",")
    )
}

fn is_query(frame: &Frame) -> bool {
    match frame {
        Frame::Message(json) => {
            Envelope::parse(json).is_ok_and(|env| env.command == "msQueryGameServers")
        }
        Frame::Discarded(_) => false,
    }
}

/// A master that answers its first connection (the bridge's poller) with
/// [`BEFORE`], holds the answer to the second query there until `release`,
/// then answers [`LATER`]; every other connection (an admin's) gets
/// [`AFTER`].
struct ScriptedMaster {
    addr: SocketAddr,
    /// Fires when the poller's second query arrived and is held.
    held: oneshot::Receiver<()>,
    release: oneshot::Sender<()>,
    /// Every query the admins' connections answered.
    admin_answers: mpsc::UnboundedReceiver<()>,
}

impl ScriptedMaster {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (held_tx, held) = oneshot::channel();
        let (release, release_rx) = oneshot::channel();
        let (answered, admin_answers) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let (poller, _) = listener.accept().await.unwrap();
            tokio::spawn(poller_script(poller, held_tx, release_rx));
            loop {
                let Ok((admin, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(admin_script(admin, answered.clone()));
            }
        });
        Self {
            addr,
            held,
            release,
            admin_answers,
        }
    }
}

async fn poller_script(
    stream: TcpStream,
    held: oneshot::Sender<()>,
    release: oneshot::Receiver<()>,
) {
    let mut framed = Framed::new(stream, FrameCodec::default());
    let mut queries = 0;
    let (mut held, mut release) = (Some(held), Some(release));
    while let Some(Ok(frame)) = framed.next().await {
        if !is_query(&frame) {
            continue;
        }
        queries += 1;
        let reply = match queries {
            1 => BEFORE,
            2 => {
                // Asked before the admin's change reached the master;
                // answered after the admin's connection had the change.
                let _ = held.take().unwrap().send(());
                release.take().unwrap().await.unwrap();
                BEFORE
            }
            _ => LATER,
        };
        if framed.send(list_json(reply).as_bytes()).await.is_err() {
            return;
        }
    }
}

async fn admin_script(stream: TcpStream, answered: mpsc::UnboundedSender<()>) {
    let mut framed = Framed::new(stream, FrameCodec::default());
    while let Some(Ok(frame)) = framed.next().await {
        if is_query(&frame) {
            if framed.send(list_json(AFTER).as_bytes()).await.is_err() {
                return;
            }
            let _ = answered.send(());
        }
    }
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
    let mut master = ScriptedMaster::start().await;
    let mut config = test_config(master.addr);
    // The poller's held query must not time out while the admin acts.
    config.master_timeout = HUNG;
    let bridge = TestBridge::start(config).await;

    // The poller's first list is published; its second query is held.
    tokio::time::timeout(HUNG, &mut master.held)
        .await
        .expect("the poller never sent its second query")
        .unwrap();
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
    tokio::time::timeout(HUNG, master.admin_answers.recv())
        .await
        .expect("the bridge never asked the admin's connection for the list")
        .unwrap();
    assert_eq!(next_list(&mut plain).await, AFTER);
    assert_eq!(next_state(&mut deltas, &mut list).await, AFTER);

    // Now the poller's older reply arrives, then a later poll's list.
    master.release.send(()).unwrap();
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
