//! The page a shared link opens, as Lighthouse (npm `lighthouse`, driving
//! headless Chromium) judges it on a phone: its default mobile run
//! (simulated slow 4G, 4× slower CPU, `throttlingMethod` simulate) on `/`
//! with `lighthouse_servers` servers listed, served as `make run` serves
//! it (the release front end in `dist/`, precompressed, from a bridge with
//! its master inside). Performance is the median of `lighthouse_runs`
//! runs (the machine is shared, so one run says little), beside the same
//! page with no server listed, measured first in the same way. SEO and
//! best practices on `/` and on the page of a server registered a moment
//! before (not yet in the history: its history's requests must not fail).

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use serde_json::Value;
use tokio::process::Command;

use lobby_testkit::{http, try_until};

use crate::{
    cdp, direct,
    error::{within_for, Error, Result},
    phases::Env,
    procs,
    report::{median, Row, Verdict},
};

/// The performance score at least (Lighthouse's 0 to 1).
const PERFORMANCE_TARGET: f64 = 0.9;

/// Chromium's flags for Lighthouse: headless, as root, nothing fetched
/// from elsewhere while it measures.
const CHROME_FLAGS: &str = "--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
     --disable-background-networking --disable-component-update --disable-sync \
     --no-first-run --no-default-browser-check";

/// One Lighthouse run, the figures the table shows.
#[derive(Debug, Clone)]
struct Report {
    performance: Option<f64>,
    seo: Option<f64>,
    best_practices: Option<f64>,
    /// Milliseconds.
    tbt: f64,
    lcp: f64,
    fcp: f64,
    tti: f64,
    cls: f64,
    /// Main-thread work by kind (ms): script evaluation, style and layout.
    script: f64,
    style: f64,
    /// The audits of SEO and best practices that did not pass.
    failed: Vec<String>,
}

/// The Lighthouse command line: `LIGHTHOUSE`, else the one
/// `scripts/bench.sh` installs beside the other tools, else `PATH`'s.
fn find() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LIGHTHOUSE") {
        return Some(PathBuf::from(p));
    }
    let tools = std::env::var_os("LOBBY_TOOLS_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/lobby-tools")));
    let installed = tools.map(|t| t.join("node_modules/.bin/lighthouse"));
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("lighthouse"))
            .find(|p| p.is_file())
    });
    installed.filter(|p| p.is_file()).or(on_path)
}

/// Runs the phase.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    const FIGURE: &str = "Lighthouse mobile";
    let n = env.sizes.lighthouse_servers;
    let why = if env.sizes.smoke {
        Some("not in the smoke run (a Lighthouse run takes half a minute)".to_owned())
    } else if !env.bins.static_dir.join("index.html").is_file() {
        Some(format!(
            "no front end in {} (bash scripts/page.sh)",
            env.bins.static_dir.display()
        ))
    } else {
        None
    };
    let (lighthouse, chromium) = match (why, find(), cdp::find()) {
        (Some(why), ..) => return Ok(vec![Row::skipped(FIGURE, why)]),
        (None, None, _) => {
            return Ok(vec![Row::skipped(
                FIGURE,
                "no lighthouse (scripts/bench.sh installs it with npm)",
            )])
        }
        (None, _, None) => return Ok(vec![Row::skipped(FIGURE, "no chromium on PATH")]),
        (None, Some(l), Some(c)) => (l, c),
    };
    let runs = env.sizes.lighthouse_runs;
    let out = env.bins.work.join("lighthouse");
    std::fs::create_dir_all(&out)?;
    let (bridge, baddr, maddr) =
        procs::start_bridge_embedded(&env.bins, &procs::bridge(&env.bins)).await?;
    let lh = |url: String, name: String, categories: &'static str| {
        let (lighthouse, chromium, out) = (lighthouse.clone(), chromium.clone(), out.clone());
        async move { lighthouse_run(&lighthouse, &chromium, &url, &out.join(name), categories).await }
    };
    let home = format!("http://{baddr}/");
    let all = "performance,seo,best-practices";

    let load_before = procs::load_average().unwrap_or_else(|| "?".into());
    let mut empty = Vec::new();
    for i in 0..runs {
        empty.push(lh(home.clone(), format!("empty-{i}.json"), all).await?);
    }
    let servers = direct::register_servers(maddr, n, "Lighthouse server", 0).await?;
    let key = listed_key(baddr, n).await?;
    // The fresh server's page first: its server is not recorded yet.
    let server = lh(
        format!("http://{baddr}/server/{key}"),
        "server.json".into(),
        "seo,best-practices",
    )
    .await?;
    let mut full = Vec::new();
    for i in 0..runs {
        full.push(lh(home.clone(), format!("full-{i}.json"), all).await?);
    }
    let load_after = procs::load_average().unwrap_or_else(|| "?".into());
    drop(servers);
    bridge.stop().await;

    let med = |v: &[Report], f: fn(&Report) -> f64| median(&v.iter().map(f).collect::<Vec<_>>());
    let score = |r: &Report| r.performance.unwrap_or(f64::NAN);
    let scores = |v: &[Report]| {
        v.iter()
            .map(|r| format!("{:.2}", score(r)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let perf = med(&full, score);
    let ms = |v: f64| format!("{v:.0} ms");
    let timing = |v: &[Report]| {
        format!(
            "TBT {}, LCP {}, FCP {}, TTI {}, CLS {:.3}",
            ms(med(v, |r| r.tbt)),
            ms(med(v, |r| r.lcp)),
            ms(med(v, |r| r.fcp)),
            ms(med(v, |r| r.tti)),
            med(v, |r| r.cls)
        )
    };
    let mut rows = vec![
        Row::new(
            format!(
                "{FIGURE} performance, / with {n} servers (slow 4G, 4× CPU, simulated; median of {runs}; load average {load_before} → {load_after})"
            ),
            format!("{perf:.2} (runs {})", scores(&full)),
            format!("no server listed {:.2} (runs {})", med(&empty, score), scores(&empty)),
            "-",
            format!("≥ {PERFORMANCE_TARGET}"),
            Verdict::of(perf >= PERFORMANCE_TARGET),
        ),
        Row::new(
            format!("{FIGURE}: / with {n} servers, medians"),
            timing(&full),
            format!("no server listed: {}", timing(&empty)),
            "-",
            "-",
            Verdict::Info,
        ),
        Row::new(
            format!("{FIGURE}: / with {n} servers, main thread (4× CPU), medians"),
            format!(
                "script evaluation {}, style and layout {}",
                ms(med(&full, |r| r.script)),
                ms(med(&full, |r| r.style))
            ),
            format!(
                "no server listed: script evaluation {}, style and layout {}",
                ms(med(&empty, |r| r.script)),
                ms(med(&empty, |r| r.style))
            ),
            "-",
            "-",
            Verdict::Info,
        ),
    ];
    for (page, r) in [
        (format!("/ with {n} servers"), &full[0]),
        (
            "/server/{key} of a server registered a moment before".to_owned(),
            &server,
        ),
    ] {
        let (seo, bp) = (r.seo.unwrap_or(0.0), r.best_practices.unwrap_or(0.0));
        let failed = if r.failed.is_empty() {
            "-".to_owned()
        } else {
            format!("failed: {}", r.failed.join(", "))
        };
        rows.push(Row::new(
            format!("{FIGURE} SEO / best practices, {page}"),
            format!("{seo:.2} / {bp:.2}"),
            failed,
            "-",
            "1.0 / 1.0",
            Verdict::of(seo >= 1.0 && bp >= 1.0),
        ));
    }
    Ok(rows)
}

/// The key of a listed server, once `/api/servers` lists `n`.
async fn listed_key(bridge: SocketAddr, n: usize) -> Result<String> {
    Ok(try_until("the servers listed", || async {
        let answer = http::get_ok(bridge, "/api/servers", "")
            .await
            .map_err(Error::Unexpected)?;
        let v: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
        let keys: Vec<&str> = v["servers"]
            .as_array()
            .map(|a| a.iter().filter_map(|s| s["key"].as_str()).collect())
            .unwrap_or_default();
        match keys.first() {
            Some(key) if keys.len() >= n => Ok(key.to_string()),
            _ => Err(Error::Unexpected(format!("{} of {n} listed", keys.len()))),
        }
    })
    .await?)
}

/// One Lighthouse run of `url` for `categories`, its JSON report kept at
/// `report`.
async fn lighthouse_run(
    lighthouse: &Path,
    chromium: &Path,
    url: &str,
    report: &Path,
    categories: &str,
) -> Result<Report> {
    // One Lighthouse run takes about a minute on this machine.
    let status = within_for(
        Duration::from_secs(300),
        format!("lighthouse {url}"),
        async {
            Ok(Command::new(lighthouse)
                .arg(url)
                .args(["--quiet", "--output=json"])
                .arg(format!("--output-path={}", report.display()))
                .arg(format!("--only-categories={categories}"))
                .arg(format!("--chrome-flags={CHROME_FLAGS}"))
                .env("CHROME_PATH", chromium)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .kill_on_drop(true)
                .status()
                .await?)
        },
    )
    .await?;
    if !status.success() {
        return Err(Error::Unexpected(format!("lighthouse {url}: {status}")));
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(report)?)?;
    if let Some(e) = v["runtimeError"]["message"].as_str() {
        return Err(Error::Unexpected(format!("lighthouse {url}: {e}")));
    }
    let audit = |id: &str| v["audits"][id]["numericValue"].as_f64().unwrap_or(f64::NAN);
    let work = |group: &str| {
        v["audits"]["mainthread-work-breakdown"]["details"]["items"]
            .as_array()
            .and_then(|items| items.iter().find(|i| i["group"] == group))
            .and_then(|i| i["duration"].as_f64())
            .unwrap_or(0.0)
    };
    let category = |id: &str| v["categories"][id]["score"].as_f64();
    let mut failed = Vec::new();
    for id in ["seo", "best-practices"] {
        for r in v["categories"][id]["auditRefs"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let name = r["id"].as_str().unwrap_or("?");
            let weighted = r["weight"].as_f64().unwrap_or(0.0) > 0.0;
            if weighted && v["audits"][name]["score"].as_f64().is_some_and(|s| s < 1.0) {
                failed.push(name.to_owned());
            }
        }
    }
    Ok(Report {
        performance: category("performance"),
        seo: category("seo"),
        best_practices: category("best-practices"),
        tbt: audit("total-blocking-time"),
        lcp: audit("largest-contentful-paint"),
        fcp: audit("first-contentful-paint"),
        tti: audit("interactive"),
        cls: audit("cumulative-layout-shift"),
        script: work("scriptEvaluation"),
        style: work("styleLayout"),
        failed,
    })
}
