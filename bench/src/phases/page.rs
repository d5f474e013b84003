//! The page with thousands of servers, in headless Chromium: time to the
//! first full render and to apply a one-server change, as the page itself
//! measures them (`window.__lobbyMetrics`); a server's page
//! (`/server/{key}`) from its record's arrival to its drawn details; and
//! the master's query round trip with that many servers, since they are
//! registered anyway.

use std::time::Instant;

use crate::{
    cdp::{self, Chromium},
    direct::{self, Conn},
    error::{Error, Result},
    phases::Env,
    procs,
    report::{count, histogram, median, q, record, times, Row, Verdict},
};

const FIRST: &str = "page first full render";
const CHANGE: &str = "page one-server change";
const MASTER: &str = "master query round trip";
const FIRST_LOAD: &str = "page first load: /api/servers as the page fetched it";
const SERVER_PAGE: &str = "server page first render after its record arrives (/server/{key})";

/// The page's first list as it came over the wire (resource timing).
struct Fetched {
    encoded: f64,
    decoded: f64,
    encoding: String,
}

/// The last `/api/servers` the page fetched (`None`: it fetched none), and
/// the `Content-Encoding` the bridge answers Chromium's own request with.
async fn first_load(browser: &mut Chromium) -> Result<Option<Fetched>> {
    let v = browser
        .eval(
            "(() => { const e = performance.getEntriesByType('resource')\
             .filter(e => e.name.includes('/api/servers')).pop(); \
             return e ? [e.encodedBodySize, e.decodedBodySize] : null })()",
        )
        .await?;
    let Some(sizes) = v.as_array() else {
        return Ok(None);
    };
    let at = |i: usize| sizes.get(i).and_then(|x| x.as_f64()).unwrap_or(f64::NAN);
    browser
        .eval(
            "window.__benchEncoding = undefined; fetch('/api/servers', {cache: 'no-store'})\
             .then(r => { window.__benchEncoding = r.headers.get('content-encoding') || 'identity' })\
             .catch(e => { window.__benchEncoding = 'failed: ' + e })",
        )
        .await?;
    let encoding = browser
        .wait_for("window.__benchEncoding === undefined ? null : window.__benchEncoding")
        .await?;
    Ok(Some(Fetched {
        encoded: at(0),
        decoded: at(1),
        encoding: encoding.as_str().unwrap_or("?").to_owned(),
    }))
}

/// Runs the page and master-query figures.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let n = s.page_servers;
    let (master, maddr) = procs::start_master(&env.bins, n + 2_000).await?;
    let mut tcp = direct::connect(maddr).await?;
    let mut empty = histogram();
    for i in 0..s.warmup_rounds + s.master_rounds {
        let t = Instant::now();
        direct::query(&mut tcp).await?;
        if i >= s.warmup_rounds {
            record(&mut empty, t.elapsed());
        }
    }
    let mut first = direct::register_servers(maddr, 1, "Page", 0).await?;

    let chromium = cdp::find();
    let front_end = env.bins.static_dir.join("index.html").is_file();
    let mut page = None;
    if let (Some(bin), true) = (&chromium, front_end) {
        let (bridge, baddr) =
            procs::start_bridge(&env.bins, maddr, &procs::bridge(&env.bins)).await?;
        let mut browser = Chromium::launch(bin, &env.bins.work).await?;
        let url = format!("http://{baddr}/");
        let small = measure(
            &mut browser,
            &url,
            1,
            &mut first[0],
            s.page_loads,
            s.page_changes,
            500,
        )
        .await;
        let server = server_page(&mut browser, &url, s.page_loads).await;
        page = Some((bridge, browser, url, small, server));
    }

    let _rest = direct::register_servers(maddr, n - 1, "Page server", 1).await?;
    let mut full = histogram();
    for i in 0..s.warmup_rounds + s.master_rounds {
        let t = Instant::now();
        let reply = direct::query(&mut tcp).await?;
        if i == 0 && !reply.windows(10).any(|w| w == b"Page serve") {
            return Err(Error::Unexpected("the full list lacks the servers".into()));
        }
        if i >= s.warmup_rounds {
            record(&mut full, t.elapsed());
        }
    }
    let reply_kb = direct::query(&mut tcp).await?.len() as f64 / 1000.0;
    let p50 = full.value_at_quantile(0.5);
    let mut rows = vec![Row::new(
        format!(
            "{MASTER} ({} servers on their own connections, {reply_kb:.0} KB reply, {} queries)",
            count(n as u64),
            s.master_rounds
        ),
        format!("p50 {} (p99 {})", q(&full, 0.5), q(&full, 0.99)),
        format!("empty list p50 {}", q(&empty, 0.5)),
        times(p50 as f64, empty.value_at_quantile(0.5) as f64),
        "p50 ≤ 5 ms",
        Verdict::of(p50 <= 5_000),
    )];

    match page {
        Some((bridge, mut browser, url, small, server)) => {
            let big = measure(
                &mut browser,
                &url,
                n,
                &mut first[0],
                s.page_loads,
                s.page_changes,
                600,
            )
            .await;
            let parse = json_parse_ms(&mut browser, n).await;
            let fetched = first_load(&mut browser).await;
            browser.close().await;
            bridge.stop().await;
            let (small, big, server) = (small?, big?, server?);
            let fmt = |v: &[f64]| format!("{:.1} ms", median(v));
            let spread = |v: &[f64]| {
                format!(
                    "{:.1} ms (median of {}, max {:.1} ms)",
                    median(v),
                    v.len(),
                    v.iter().copied().fold(0.0, f64::max)
                )
            };
            rows.push(Row::new(
                format!("{FIRST} ({} servers, headless Chromium)", count(n as u64)),
                spread(&big.0),
                format!("1 server {}", fmt(&small.0)),
                times(median(&big.0), median(&small.0)),
                "≤ 150 ms",
                Verdict::of(median(&big.0) <= 150.0),
            ));
            rows.push(Row::new(
                format!("{CHANGE} ({} servers)", count(n as u64)),
                spread(&big.1),
                format!("1 server {}", fmt(&small.1)),
                times(median(&big.1), median(&small.1)),
                "≤ 16 ms",
                Verdict::of(median(&big.1) <= 16.0),
            ));
            rows.push(Row::new(
                format!("{SERVER_PAGE} (headless Chromium)"),
                spread(&server),
                "-",
                "-",
                "≤ 100 ms",
                Verdict::of(median(&server) <= 100.0),
            ));
            rows.push(Row::new(
                "of which parsing the list frame in the page (wasm, serde_json)".to_owned(),
                format!("{:.1} ms (median of {})", median(&big.2), big.2.len()),
                format!("1 server {}", fmt(&small.2)),
                times(median(&big.2), median(&small.2)),
                "-",
                Verdict::Info,
            ));
            rows.push(Row::new(
                format!(
                    "floor of a full-list update: JSON.parse of a {}-server list in the page",
                    count(n as u64)
                ),
                format!("{:.1} ms (median of 5)", parse?),
                "-",
                "-",
                "-",
                Verdict::Info,
            ));
            // The delta rows: only a front end that loads its first list
            // from /api/servers (and then follows deltas) has them.
            match fetched? {
                Some(f) => {
                    rows.push(Row::new(
                        format!("{CHANGE}, deltas ({} servers)", count(n as u64)),
                        spread(&big.1),
                        format!("1 server {}", fmt(&small.1)),
                        times(median(&big.1), median(&small.1)),
                        "≤ 4 ms",
                        Verdict::of(median(&big.1) <= 4.0),
                    ));
                    rows.push(Row::new(
                        format!(
                            "{FIRST_LOAD} ({} servers, Content-Encoding {} as Chromium asked over http)",
                            count(n as u64),
                            f.encoding
                        ),
                        format!(
                            "{:.1} KB ({:.1} % of raw)",
                            f.encoded / 1000.0,
                            100.0 * f.encoded / f.decoded.max(1.0)
                        ),
                        format!("raw JSON {:.1} KB", f.decoded / 1000.0),
                        times(f.encoded, f.decoded),
                        "≤ 25 % of raw",
                        Verdict::of(f.encoded <= 0.25 * f.decoded),
                    ));
                }
                None => {
                    let why = "the page did not fetch /api/servers (a front end without deltas)";
                    rows.push(Row::skipped(format!("{CHANGE}, deltas"), why));
                    rows.push(Row::skipped(FIRST_LOAD, why));
                }
            }
        }
        None => {
            let why = match chromium {
                None => "no chromium on PATH".to_owned(),
                Some(_) => format!(
                    "no front end in {} (run `trunk build --release`)",
                    env.bins.static_dir.display()
                ),
            };
            rows.push(Row::skipped(FIRST, why.clone()));
            rows.push(Row::skipped(SERVER_PAGE, why.clone()));
            rows.push(Row::skipped(CHANGE, why));
        }
    }
    master.stop().await;
    Ok(rows)
}

/// How long the page's JavaScript takes just to parse a list of `n`
/// servers shaped like the master's: what any full-list update costs
/// before the front end does anything with it.
async fn json_parse_ms(browser: &mut Chromium, n: usize) -> Result<f64> {
    let v = browser
        .eval(&format!(
            "(() => {{ const s = JSON.stringify({{command: 'msRQueryGameServers', content: {{servers: \
             Array.from({{length: {n}}}, (_, i) => ({{name: 'Page server ' + i, address: '192.168.0.10', \
             port: 20000 + i % 30000, players: {{current: 0, max: 4}}, isLobbyOpen: true, gameplayMode: 1}}))}}}}); \
             const t = []; for (let k = 0; k < 5; k++) {{ const a = performance.now(); JSON.parse(s); \
             t.push(performance.now() - a); }} t.sort((a, b) => a - b); return t[2]; }})()"
        ))
        .await?;
    v.as_f64()
        .ok_or_else(|| Error::Unexpected(format!("JSON.parse timing: {v}")))
}

/// Loads the page of the first listed server (its key from
/// `/api/servers`) `loads` times after one unmeasured load: the page's
/// `serverPageRenderMs` each time, from its record's arrival
/// (`/api/servers/{key}`) to the drawn details.
async fn server_page(browser: &mut Chromium, base: &str, loads: usize) -> Result<Vec<f64>> {
    browser
        .eval(
            "window.__benchKey = undefined; fetch('/api/servers', {cache: 'no-store'})\
             .then(r => r.json()).then(j => { window.__benchKey = (j.servers[0] || {}).key || 'none' })\
             .catch(e => { window.__benchKey = 'failed: ' + e })",
        )
        .await?;
    let key = browser
        .wait_for("window.__benchKey === undefined ? null : window.__benchKey")
        .await?;
    let key = key.as_str().unwrap_or("none").to_owned();
    if key.len() != 16 {
        return Err(Error::Unexpected(format!(
            "no server key in /api/servers: {key}"
        )));
    }
    let url = format!("{}server/{key}", base);
    let mut out = Vec::new();
    for load in 0..=loads {
        browser.eval("window.__lobbyMetrics = undefined").await?;
        browser.navigate(&url).await?;
        let v = browser
            .wait_for(
                "(() => { const m = window.__lobbyMetrics; \
                 return m && typeof m.serverPageRenderMs === 'number' ? m.serverPageRenderMs : null })()",
            )
            .await?;
        if load > 0 {
            out.push(v.as_f64().unwrap_or(f64::NAN));
        }
    }
    Ok(out)
}

/// Loads the page `loads` times (first full render of `expect` servers),
/// then changes `game`'s stats `changes` times: the page's update times
/// and the parts of them spent parsing the frame.
async fn measure(
    browser: &mut Chromium,
    url: &str,
    expect: usize,
    game: &mut Conn,
    loads: usize,
    changes: usize,
    marker_base: u64,
) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let mut first = Vec::new();
    // The first load compiles the page's code and is not counted.
    for load in 0..=loads {
        // The old document forgets its figures before the new one loads.
        browser.eval("window.__lobbyMetrics = undefined").await?;
        browser.navigate(url).await?;
        let v = browser
            .wait_for(
                &format!(
                    "(() => {{ const m = window.__lobbyMetrics; \
                     return m && m.lastListSize === {expect} && typeof m.firstFullRenderMs === 'number' \
                     ? m.firstFullRenderMs : null }})()"
                ),
            )
            .await?;
        if load > 0 {
            first.push(v.as_f64().unwrap_or(f64::NAN));
        }
    }
    let mut update = Vec::new();
    let mut parse = Vec::new();
    for i in 0..changes as u64 {
        // Every render replaces the object: a new one lacks this mark.
        browser
            .eval("window.__lobbyMetrics.benchSeen = true")
            .await?;
        direct::send(game, &direct::stats_json(marker_base + i)).await?;
        let v = browser
            .wait_for(&format!(
                "(() => {{ const m = window.__lobbyMetrics; \
                     return m && !m.benchSeen && m.lastListSize === {expect} \
                     ? [m.lastUpdateMs, m.lastParseMs] : null }})()"
            ))
            .await?;
        let at = |i: usize| v.get(i).and_then(|x| x.as_f64()).unwrap_or(f64::NAN);
        update.push(at(0));
        parse.push(at(1));
    }
    Ok((first, update, parse))
}
