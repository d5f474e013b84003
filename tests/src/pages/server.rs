//! A server's page (`/server/{key}`): its name, live state, the history
//! graph and its range buttons, the embed snippets; and the "no such
//! server" state.

use std::time::Duration;

use serde_json::Value;

use super::Page;
use crate::wait_for;

/// The kind of [`ServerPage`].
pub enum Server {}

/// A browser showing a server's page.
pub type ServerPage<'a> = Page<'a, Server>;

/// The name's link in the list's row of `name`.
pub fn row_link(name: &str) -> String {
    format!("{} a.row-link", super::list::row(name))
}

impl ServerPage<'_> {
    /// Waits until the page shows server `name` (its heading).
    pub async fn wait_name(&self, name: &str, timeout: Duration) {
        self.wait_text("[data-testid=server-name]", name, timeout)
            .await;
    }

    /// Waits until the state's `part` (`online`, `players`, `lobby`)
    /// says `text`.
    pub async fn wait_state(&self, part: &str, text: &str, timeout: Duration) {
        self.wait_text(
            &format!("[data-testid=server-page] [data-testid=server-{part}]"),
            text,
            timeout,
        )
        .await;
    }

    /// The address shown (`None`: the page shows none).
    pub async fn address(&self) -> Option<String> {
        self.text("[data-testid=server-address] code").await
    }

    /// How many points the history graph draws, and its range (`24h`, …).
    pub async fn graph(&self) -> (u64, String) {
        let v = self
            .js(
                "const g = document.querySelector('[data-testid=server-graph]');\
                 return g ? [Number(g.dataset.points), g.dataset.span] : [-1, ''];",
            )
            .await;
        (
            v[0].as_u64().unwrap_or(0),
            v[1].as_str().unwrap_or_default().to_owned(),
        )
    }

    /// Waits until the graph of `span` draws more than `than` points;
    /// returns how many.
    pub async fn wait_points_above(&self, span: &str, than: u64, timeout: Duration) -> u64 {
        let what = format!("the {span} graph to draw more than {than} points");
        wait_for(&what, timeout, || async {
            match self.graph().await {
                (n, s) if s == span && n > than => Ok(n),
                other => Err(format!("{other:?}")),
            }
        })
        .await
    }

    /// The graph's text alternative (for screen readers).
    pub async fn graph_summary(&self) -> String {
        self.text("[data-testid=server-graph] [data-testid=graph-summary]")
            .await
            .unwrap_or_default()
    }

    /// Shows the history of `span` (`1h`, `24h`, `7d`, `30d`).
    pub async fn select_span(&self, span: &str) {
        self.click(&format!("button.span[data-span='{span}']"))
            .await;
    }

    /// The embed snippet of `format` (`html`, `markdown`, `bbcode`,
    /// `iframe`).
    pub async fn snippet(&self, format: &str) -> String {
        self.prop(&format!("#snippet-{format}"), "value")
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// `window.__lobbyMetrics.serverPageRenderMs`, once recorded.
    pub async fn wait_render_metric(&self, timeout: Duration) -> f64 {
        wait_for("serverPageRenderMs", timeout, || async {
            let v = self
                .js("return (window.__lobbyMetrics || {}).serverPageRenderMs ?? JSON.stringify(window.__lobbyMetrics || null);")
                .await;
            match v {
                Value::Number(n) => n.as_f64().ok_or_else(|| n.to_string()),
                other => Err(other.to_string()),
            }
        })
        .await
    }
}
