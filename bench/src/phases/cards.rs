//! Cards (`docs/protocol.md` §2.6): what the PNG cards cost the bridge.
//! With `card_servers` servers listed, each server's card is asked for
//! once (drawn then: the SVG laid out and rasterized, the PNG encoded) and
//! timed from the request to its last byte, beside the same server's SVG
//! badge asked for the first time (the same run's baseline: the same
//! answer cache and path, without the drawing). Then `card_requests`
//! requests for the same cards, spread over the servers: served from the
//! cache, with no card drawn again (the bridge's `bridge_cards_drawn_total`
//! says so). The bridge's CPU time (user + system, from `/proc`) is read
//! around both rounds: the drawings and the requests together.

use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use lobby_testkit::{http, metrics, try_until};

use crate::{
    direct,
    error::{Error, Result},
    phases::Env,
    procs,
    report::{histogram, q, record, Row, Verdict},
};

/// A card drawn, p95, at most.
const DRAW_TARGET: Duration = Duration::from_millis(20);
/// The bridge's CPU for every card request (1,000 for 100 servers).
const CPU_TARGET: Duration = Duration::from_secs(1);

/// Runs the phase.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let (bridge, baddr, maddr) =
        procs::start_bridge_embedded(&env.bins, &procs::bridge(&env.bins)).await?;
    let servers = direct::register_servers(maddr, s.card_servers, "Card", 0).await?;
    let keys = try_until("the servers listed", || async {
        match listed_keys(baddr).await? {
            keys if keys.len() >= s.card_servers => Ok(keys),
            keys => Err(Error::Unexpected(format!("{} listed", keys.len()))),
        }
    })
    .await?;

    let cpu_before = procs::cpu_time(bridge.pid())?;
    let (mut drawn, mut badge) = (histogram(), histogram());
    for key in &keys {
        let t0 = Instant::now();
        let card = http::get_ok(baddr, &format!("/card/{key}.png"), "")
            .await
            .map_err(Error::Unexpected)?;
        record(&mut drawn, t0.elapsed());
        if !card.body.starts_with(b"\x89PNG") {
            return Err(Error::Unexpected(format!("/card/{key}.png is no PNG")));
        }
        let t0 = Instant::now();
        http::get_ok(baddr, &format!("/badge/{key}.svg"), "")
            .await
            .map_err(Error::Unexpected)?;
        record(&mut badge, t0.elapsed());
    }
    let drawings = metrics::scrape(baddr, "bridge_cards_drawn_total")
        .await
        .map_err(Error::Unexpected)?;
    let mut cached = histogram();
    for i in 0..s.card_requests {
        let key = &keys[i % keys.len()];
        let t0 = Instant::now();
        http::get_ok(baddr, &format!("/card/{key}.png"), "")
            .await
            .map_err(Error::Unexpected)?;
        record(&mut cached, t0.elapsed());
    }
    // The badges' requests are the baseline's, not the cards': their CPU
    // is small beside the drawings (the badge row says how small).
    let cpu = procs::cpu_time(bridge.pid())?.saturating_sub(cpu_before);
    let again = metrics::scrape(baddr, "bridge_cards_drawn_total")
        .await
        .map_err(Error::Unexpected)?
        - drawings;
    drop(servers);
    bridge.stop().await;

    let n = s.card_servers;
    let p95 = Duration::from_micros(drawn.value_at_quantile(0.95));
    Ok(vec![
        Row::new(
            format!("cards: a card drawn and served ({n} servers), p50 / p95"),
            format!("{} / {}", q(&drawn, 0.5), q(&drawn, 0.95)),
            format!("{} / {} an SVG badge", q(&badge, 0.5), q(&badge, 0.95)),
            "-",
            "p95 ≤ 20 ms",
            Verdict::of(p95 <= DRAW_TARGET),
        ),
        Row::new(
            format!(
                "cards: {} requests from the cache (drawn again: {again}), p50 / p95",
                s.card_requests
            ),
            format!("{} / {}", q(&cached, 0.5), q(&cached, 0.95)),
            format!("{} / {} drawn", q(&drawn, 0.5), q(&drawn, 0.95)),
            "-",
            "none drawn again",
            Verdict::of(again == 0.0),
        ),
        Row::new(
            format!(
                "cards: bridge CPU for {n} drawn + {} cached requests (+ {n} badges)",
                s.card_requests
            ),
            format!("{:.0} ms", cpu.as_secs_f64() * 1000.0),
            "-",
            "-",
            "≤ 1 s",
            Verdict::of(cpu <= CPU_TARGET),
        ),
    ])
}

/// The keys `/api/servers` lists.
async fn listed_keys(bridge: std::net::SocketAddr) -> Result<Vec<String>> {
    let answer = http::get_ok(bridge, "/api/servers", "")
        .await
        .map_err(Error::Unexpected)?;
    let v: Value = serde_json::from_slice(&answer.body)
        .map_err(|e| Error::Unexpected(format!("/api/servers: {e}")))?;
    Ok(v["servers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s["key"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default())
}
