//! Accessibility checks in the browser: axe-core (the npm package that
//! `scripts/setup.sh test` installs) is injected into the page a
//! [`Browser`] shows and run on the whole document; a test asserts there
//! are no violations, and gets each one's rule, impact and failing elements
//! when there are.

use std::{fmt, path::PathBuf, sync::OnceLock};

use serde_json::Value;

use crate::{browser::Browser, until};

/// Where axe.min.js is: `AXE_CORE_JS` (set by `scripts/env.sh`), else the
/// tools folder `scripts/setup.sh` installs it into.
pub fn axe_path() -> PathBuf {
    if let Some(p) = std::env::var_os("AXE_CORE_JS") {
        return PathBuf::from(p);
    }
    let tools = std::env::var_os("LOBBY_TOOLS_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/lobby-tools")))
        .unwrap_or_else(|| PathBuf::from(".cache/lobby-tools"));
    tools.join("node_modules/axe-core/axe.min.js")
}

/// The text of axe.min.js, read once per test binary; panics with the
/// command that installs it when it is missing.
fn axe_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| {
        let path = axe_path();
        std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "the accessibility tests need axe-core at {} ({e}): run `bash scripts/setup.sh test` \
                 and `source scripts/env.sh` (or set AXE_CORE_JS to axe.min.js)",
                path.display()
            )
        })
    })
}

/// One element that breaks a rule.
#[derive(Debug, Clone)]
pub struct Node {
    /// axe's CSS selector path to the element.
    pub target: String,
    /// What is wrong with it, in axe's words (the measured contrast, ...).
    pub failure: String,
}

/// One broken rule and the elements that break it.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The rule (`color-contrast`, `page-has-heading-one`, ...).
    pub id: String,
    /// `minor`, `moderate`, `serious` or `critical`.
    pub impact: String,
    /// The rule in one line.
    pub help: String,
    pub nodes: Vec<Node>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "- {} ({}): {}", self.id, self.impact, self.help)?;
        for n in &self.nodes {
            let failure = n.failure.replace('\n', "\n      ");
            writeln!(f, "    {}\n      {failure}", n.target)?;
        }
        Ok(())
    }
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_owned()
}

fn violation(v: &Value) -> Violation {
    let nodes = v["nodes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|n| Node {
            target: n["target"].to_string(),
            failure: text(n, "failureSummary"),
        })
        .collect();
    Violation {
        id: text(v, "id"),
        impact: text(v, "impact"),
        help: text(v, "help"),
        nodes,
    }
}

/// Waits until no finite animation runs (endless ones, like the live
/// pill's pulse on a hidden dot, are left alone).
async fn animations_settled(browser: &Browser) {
    until("the page's animations to end", || async {
        let running = browser
            .eval(
                "document.getAnimations().filter(a => a.playState === 'running' \
                 && a.effect && a.effect.getComputedTiming().endTime !== Infinity).length",
            )
            .await;
        if running.as_u64() == Some(0) {
            Ok(())
        } else {
            Err(format!("{running} running"))
        }
    })
    .await
}

/// Runs axe-core on the document `browser` shows (injecting it first if
/// this document lacks it) and returns its violations of every rule it
/// runs by default (WCAG 2.x A and AA and best practices).
pub async fn violations(browser: &Browser) -> Vec<Violation> {
    animations_settled(browser).await;
    let has_axe = browser.eval("typeof window.axe === 'object'").await;
    if has_axe != Value::Bool(true) {
        let loaded = browser
            .js(&format!(
                "{}\nreturn typeof window.axe === 'object';",
                axe_source()
            ))
            .await;
        assert_eq!(loaded, Value::Bool(true), "axe-core did not load");
    }
    // WebDriver waits for the returned promise.
    let result = browser
        .js("return axe.run(document, {resultTypes: ['violations']})\
             .then(r => ({violations: r.violations}), e => ({error: String(e)}));")
        .await;
    if let Some(e) = result["error"].as_str() {
        panic!("axe-core failed: {e}");
    }
    result["violations"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(violation)
        .collect()
}

/// What axe-core finds on the page `browser` shows, as a readable report
/// headed by `label` (the page and its state: "list · de · dark"); empty
/// when the page passes. A test checks every page before it fails.
pub async fn report(browser: &Browser, label: &str) -> String {
    let found = violations(browser).await;
    if found.is_empty() {
        return String::new();
    }
    let nodes: usize = found.iter().map(|v| v.nodes.len()).sum();
    let list: String = found.iter().map(ToString::to_string).collect();
    format!(
        "{label}: {} rule(s) broken on {nodes} element(s):\n{list}",
        found.len()
    )
}

/// Panics with [`report`] unless axe-core finds nothing on the page
/// `browser` shows.
pub async fn assert_no_violations(browser: &Browser, label: &str) {
    let found = report(browser, label).await;
    assert!(found.is_empty(), "accessibility violations:\n{found}");
}
