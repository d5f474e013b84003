//! The server page's pieces that need a browser, in headless Chromium
//! (wasm-bindgen-test): the answers read into the protocol's types, and the
//! history graph drawn from them with its text alternative and its gaps.
#![cfg(target_arch = "wasm32")]

use crate::common;

use std::rc::Rc;

use common::{until, Mounted};
use frontend::{
    components::history_graph::{GraphLine, HistoryGraph, HistoryGraphProps},
    history::{players, step_ms},
    services::api::read_answer,
};
use protocol::{api, entry::ServerDetails, GameplayMode};
use wasm_bindgen_test::*;
use yew::prelude::*;

#[wasm_bindgen_test]
fn answers_read_as_the_bridge_writes_them() {
    let read_info = read_answer::<ServerDetails>;
    let info = read_info(
        r#"{"key":"0123456789abcdef","name":"Feuerland","address":"192.168.0.10","port":20000,
            "online":false,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":2,
            "firstSeen":1700000000000,"lastSeen":1700000060000}"#,
    )
    .expect("a record");
    assert_eq!(info.name, "Feuerland");
    assert_eq!(info.port, Some(20000));
    assert_eq!((info.players.current, info.players.max), (2, 4));
    assert_eq!(info.gameplay_mode, GameplayMode::StandardAB);
    assert_eq!(info.last_seen, 1_700_000_060_000);
    let hidden = read_info(
        r#"{"key":"0123456789abcdef","name":"X","online":true,"players":{"current":0,"max":2},
            "isLobbyOpen":false,"gameplayMode":1,"firstSeen":1,"lastSeen":2}"#,
    )
    .expect("a record without address");
    assert_eq!((hidden.address, hidden.port), (None, None));
    for bad in [
        r#"{"error":"no server with this key was seen"}"#,
        "not json",
        r#"{"key":"0123456789abcdef","name":"X","online":true,"players":{"current":-1,"max":4},"isLobbyOpen":true,"gameplayMode":1,"firstSeen":1,"lastSeen":2}"#,
        r#"{"key":"0123456789abcdef","name":"X","online":true,"players":{"current":1,"max":4},"isLobbyOpen":true,"gameplayMode":3,"firstSeen":1,"lastSeen":2}"#,
    ] {
        assert_eq!(read_info(bad), None, "{bad}");
    }

    let h = read_answer::<api::ServerHistory>(
        r#"{"key":"0123456789abcdef","range":"24h","step":60,
            "points":[[0,2.5,4,1,0.5],[60000,null,null,0,0]]}"#,
    )
    .expect("points");
    assert_eq!(step_ms(h.step), 60_000.0);
    assert_eq!(players(&h), vec![(0.0, Some(2.5)), (60_000.0, None)]);
    assert_eq!(read_answer::<api::ServerHistory>(r#"{"step":60}"#), None);
}

#[derive(Properties, PartialEq)]
struct Wrap {
    graph: Rc<HistoryGraphProps>,
}

#[component]
fn Graph(props: &Wrap) -> Html {
    let p = &props.graph;
    html! {
        <HistoryGraph lines={p.lines.clone()} step_ms={p.step_ms} span={p.span}
            to_ms={p.to_ms} floor={p.floor} testid={p.testid.clone()} />
    }
}

#[wasm_bindgen_test]
async fn the_graph_draws_runs_with_gaps_and_says_what_it_shows() {
    const M: f64 = 60_000.0;
    let to = 1_700_000_000_000.0;
    // Two runs: 3 points, a missing minute, then 1 point.
    let series = vec![
        (to - 10.0 * M, Some(1.0)),
        (to - 9.0 * M, Some(3.0)),
        (to - 8.0 * M, Some(2.0)),
        (to - 6.0 * M, Some(2.0)),
    ];
    let props = HistoryGraphProps {
        lines: vec![GraphLine {
            series: Rc::new(series),
            class: "players",
            what: "Players",
        }],
        step_ms: M,
        span: api::HistoryRange::Hour,
        to_ms: to,
        floor: 4.0,
        small: false,
        testid: "g".into(),
    };
    let mounted = Mounted::<Graph>::with_props(Wrap {
        graph: Rc::new(props),
    });
    let root = mounted.root.clone();
    until("the graph", || {
        root.query_selector("[data-testid=g]")
            .ok()
            .flatten()
            .is_some()
    })
    .await;
    let figure = root.query_selector("[data-testid=g]").unwrap().unwrap();
    assert_eq!(figure.get_attribute("data-points").as_deref(), Some("4"));
    let line = root
        .query_selector("path.line")
        .unwrap()
        .unwrap()
        .get_attribute("d")
        .unwrap();
    assert_eq!(line.matches('M').count(), 2, "{line}");
    let svg = root.query_selector("svg").unwrap().unwrap();
    assert_eq!(svg.get_attribute("aria-hidden"), None);
    let plot = root.query_selector(".plot").unwrap().unwrap();
    assert_eq!(plot.get_attribute("aria-hidden").as_deref(), Some("true"));
    let summary = root
        .query_selector("figcaption")
        .unwrap()
        .unwrap()
        .text_content()
        .unwrap_or_default();
    assert!(
        summary.starts_with("Players over the last hour: peak 3 at "),
        "{summary}"
    );
    assert!(summary.ends_with(", average 2."), "{summary}");
    // Value labels 0..4 for a server of 4 slots.
    assert_eq!(root.query_selector_all(".tick.y").unwrap().length(), 5);
}
