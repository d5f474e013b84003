//! 1,000 concurrent subscribed viewers: each receives a change, and the
//! master sees one query per poll interval however many watch.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::*;
use tokio::sync::{Barrier, Semaphore};

const VIEWERS: usize = 1000;
/// Queries each viewer sends, one a second, after the change.
const QUERIES: usize = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_subscribers_share_one_upstream() {
    // Two descriptors per viewer (client and bridge side), plus the master's.
    let limit = rlimit::increase_nofile_limit(16_384).unwrap();
    assert!(
        limit >= 2_500,
        "need about 2,100 file descriptors, have {limit}"
    );
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    // The production interval, so the count below is the real one.
    config.poll_interval = Duration::from_secs(1);
    // Every viewer comes from 127.0.0.1.
    config.max_ws_per_address = VIEWERS;
    config.max_http_per_address = VIEWERS + 100;
    let bridge = TestBridge::start(config).await;
    let url = bridge.url();

    let connecting = Arc::new(Semaphore::new(100));
    // Everyone subscribed; the change is visible; every query answered.
    let subscribed = Arc::new(Barrier::new(VIEWERS + 1));
    let changed = Arc::new(Barrier::new(VIEWERS + 1));
    let window_over = Arc::new(Barrier::new(VIEWERS + 1));
    let mut tasks = Vec::with_capacity(VIEWERS);
    for _ in 0..VIEWERS {
        let (url, connecting) = (url.clone(), connecting.clone());
        let (subscribed, changed, window_over) =
            (subscribed.clone(), changed.clone(), window_over.clone());
        tasks.push(tokio::spawn(async move {
            let permit = connecting.acquire_owned().await.unwrap();
            let (mut ws, _) = tokio::time::timeout(HUNG, tokio_tungstenite::connect_async(url))
                .await
                .unwrap()
                .unwrap();
            drop(permit);
            send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
            assert!(names(&recv_json(&mut ws).await).is_empty());
            subscribed.wait().await;
            let v = recv_until(&mut ws, |v| is_list(v) && !names(v).is_empty()).await;
            assert_eq!(names(&v), ["Crowded"]);
            changed.wait().await;
            // Each viewer also asks once a second, QUERIES times; the
            // bridge answers from the shared list.
            let mut answered = 0;
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            while answered < QUERIES {
                tick.tick().await;
                send(&mut ws, r#"{"command":"msQueryGameServers"}"#).await;
                assert_eq!(names(&recv_json(&mut ws).await), ["Crowded"]);
                answered += 1;
            }
            window_over.wait().await;
            answered
        }));
    }
    tokio::time::timeout(Duration::from_secs(30), subscribed.wait())
        .await
        .expect("viewers did not all subscribe");
    assert_eq!(
        bridge
            .metrics
            .viewers
            .load(std::sync::atomic::Ordering::Relaxed),
        VIEWERS as i64
    );

    let _game = game_server(master.addr, "Crowded", 20000).await;
    let pushed = tokio::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(20), changed.wait())
        .await
        .expect("not every viewer received the change");
    let push_time = pushed.elapsed();

    // The window is the viewers' own queries: from the change until every
    // one is answered, however long a loaded machine takes for them.
    let before = master.queries();
    let window = tokio::time::Instant::now();
    tokio::time::timeout(HUNG, window_over.wait())
        .await
        .expect("viewers' queries were not all answered");
    let during = master.queries() - before;
    let window = window.elapsed();
    let mut viewer_queries = 0;
    for t in tasks {
        viewer_queries += t.await.unwrap();
    }
    println!(
        "{VIEWERS} subscribed viewers: change reached all in {push_time:?}; \
         master answered {during} queries in {window:?} (poll interval 1 s) \
         while viewers sent {viewer_queries} queries to the bridge"
    );
    assert_eq!(viewer_queries, VIEWERS * QUERIES);
    // One per interval, plus at most a little jitter at the window's edges.
    let intervals = window.as_secs() + 1;
    assert!(
        during <= intervals + 2,
        "master saw {during} queries in {window:?}"
    );
    bridge.shutdown().await;
}
