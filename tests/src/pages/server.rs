//! A server's page (`/server/{key}`): its name, live state, the history
//! graph and its range buttons, the embed snippets; and the "no such
//! server" state.

use serde_json::Value;

use super::Page;
use crate::until;

/// The tab's own notices, as the page notes them
/// ([`ServerPage::notices`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notices {
    /// The list version the tab last decided its watches' events for.
    pub looked: u64,
    /// Notices decided and not yet shown.
    pub pending: u64,
    /// The tags of the notices shown, as notifications or toasts.
    pub settled: Vec<String>,
}

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
    pub async fn wait_name(&self, name: &str) {
        self.wait_text("[data-testid=server-name]", name).await;
    }

    /// Waits until the state's `part` (`online`, `players`, `lobby`)
    /// says `text`.
    pub async fn wait_state(&self, part: &str, text: &str) {
        self.wait_text(
            &format!("[data-testid=server-page] [data-testid=server-{part}]"),
            text,
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
    pub async fn wait_points_above(&self, span: &str, than: u64) -> u64 {
        let what = format!("the {span} graph to draw more than {than} points");
        until(&what, || async {
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
    pub async fn wait_render_metric(&self) -> f64 {
        until("serverPageRenderMs", || async {
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

/// A notification as the page's service worker registration lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownNotification {
    pub tag: String,
    pub title: String,
    pub body: String,
    /// When it was shown (`data.at`, milliseconds): a notice shown again
    /// under the same tag has a later one.
    pub at: u64,
}

impl ServerPage<'_> {
    /// Opens "Notify me", ticks exactly `events` (their wire names:
    /// `server-online`, `lobby-opened`, `players-reached`), sets the
    /// number of players when given, and turns it on.
    pub async fn notify_me(&self, events: &[&str], players: Option<u32>) {
        self.click("[data-testid=notify-me]").await;
        self.find("[data-testid=notify-form]").await;
        let want = serde_json::to_string(events).expect("JSON");
        self.js(&format!(
            "const want = {want};\
             for (const box of document.querySelectorAll('[data-testid=notify-form] input[data-event]')) {{\
               if (box.checked !== want.includes(box.dataset.event)) box.click();\
             }}"
        ))
        .await;
        if let Some(n) = players {
            self.type_into("[data-testid=notify-threshold]", &n.to_string())
                .await;
        }
        self.click("[data-testid=notify-on]").await;
        self.find("[data-testid=notify-summary]").await;
    }

    /// The notifications shown through the page's service worker (by the
    /// worker for a push, or by the page for an event it saw itself).
    pub async fn notifications(&self) -> Vec<ShownNotification> {
        let v = self
            .js("return navigator.serviceWorker.ready\
                   .then(r => r.getNotifications())\
                   .then(ns => ns.map(n => [n.tag, n.title, n.body, (n.data && n.data.at) || 0]));")
            .await;
        v.as_array()
            .into_iter()
            .flatten()
            .map(|n| ShownNotification {
                tag: n[0].as_str().unwrap_or_default().to_owned(),
                title: n[1].as_str().unwrap_or_default().to_owned(),
                body: n[2].as_str().unwrap_or_default().to_owned(),
                at: n[3].as_f64().unwrap_or(0.0) as u64,
            })
            .collect()
    }

    /// The tab's own notices as the page notes them
    /// (`window.__lobbyNotices`): the list version it last decided its
    /// watches' events for, the notices still on their way, and the tags
    /// of those shown (as a notification or a toast), in order.
    pub async fn notices(&self) -> Notices {
        let v = self
            .js(
                "const n = window.__lobbyNotices || {looked: 0, pending: 0, settled: []};\
                 return [n.looked, n.pending, n.settled];",
            )
            .await;
        Notices {
            looked: v[0].as_u64().unwrap_or(0),
            pending: v[1].as_u64().unwrap_or(0),
            settled: v[2]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
        }
    }

    /// Waits until the page has decided its events for a list version
    /// newer than `than` and has shown every notice it decided: what it
    /// noted then.
    pub async fn wait_notices_after(&self, than: u64) -> Notices {
        until("the tab's notices of a newer list", || async {
            let n = self.notices().await;
            if n.looked > than && n.pending == 0 {
                Ok(n)
            } else {
                Err(format!("{n:?}"))
            }
        })
        .await
    }

    /// Waits until the page has shown a notice tagged with each of `tags`
    /// and has none on its way; then the browser's notifications, read
    /// once (reading them while one is being shown can lose it in
    /// Chromium).
    pub async fn wait_notifications(&self, tags: &[&str]) -> Vec<ShownNotification> {
        until(&format!("notices tagged {tags:?}"), || async {
            let n = self.notices().await;
            if n.pending == 0 && tags.iter().all(|t| n.settled.iter().any(|s| s == t)) {
                Ok(())
            } else {
                Err(format!("{n:?}"))
            }
        })
        .await;
        self.notifications().await
    }

    /// Waits until a notification with `tag` is shown; all of them then.
    pub async fn wait_notification(&self, tag: &str) -> Vec<ShownNotification> {
        until(&format!("a notification tagged {tag}"), || async {
            let shown = self.notifications().await;
            if shown.iter().any(|n| n.tag == tag) {
                Ok(shown)
            } else {
                Err(format!("{shown:?}"))
            }
        })
        .await
    }

    /// The toasts the page shows (without the browser's notifications):
    /// each one's tag and text.
    pub async fn toasts(&self) -> Vec<(String, String)> {
        let v = self
            .js(
                "return [...document.querySelectorAll('[data-testid=toast]')]\
                   .map(t => [t.dataset.tag, t.textContent]);",
            )
            .await;
        v.as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                (
                    t[0].as_str().unwrap_or_default().to_owned(),
                    t[1].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }
}
