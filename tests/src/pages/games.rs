//! Other games' servers on the list page: the source tabs (`?src=`), a
//! source's game table, and the detail view of one server (`?server=`) with
//! its players and rules.

use serde_json::Value;

use super::Page;
use crate::{
    browser::{css_str, js_str},
    until,
};

/// The game table's rows' names, in page order (offline ones included).
pub const ROWS: &str = "Array.from(document.querySelectorAll('tr[data-testid=game-row]'))\
                        .map(r => r.dataset.name)";
/// The names of the rows of servers that answer, in page order.
pub const ONLINE_ROWS: &str = "Array.from(document.querySelectorAll('tr[data-testid=game-row]'))\
                               .filter(r => r.dataset.online === 'true').map(r => r.dataset.name)";
/// Whether each row's server answers (`"true"`/`"false"`), in page order.
pub const ONLINE: &str = "Array.from(document.querySelectorAll('tr[data-testid=game-row]'))\
                          .map(r => r.dataset.online)";
/// Each tab's `data-source` and `aria-selected`, in page order.
pub const TABS: &str = "Array.from(document.querySelectorAll('[data-testid=source-tab]'))\
                        .map(t => [t.dataset.source, t.getAttribute('aria-selected')])";
/// The players of the open detail view, sorted by name.
pub const DETAIL_PLAYERS: &str =
    "Array.from(document.querySelectorAll('tr[data-testid=detail-player]'))\
     .map(r => r.dataset.name).sort()";
/// The rules of the open detail view, in page order.
pub const DETAIL_RULES: &str =
    "Array.from(document.querySelectorAll('tr[data-testid=detail-rule]')).map(r => r.dataset.name)";

/// The selector of the tab of source `id` (`lobby` for the lobby's list).
pub fn tab(id: &str) -> String {
    format!("[data-testid=source-tab][data-source={}]", css_str(id))
}

/// The selector of the game table's row named `name`.
pub fn row(name: &str) -> String {
    format!("tr[data-testid=game-row][data-name={}]", css_str(name))
}

/// The JS expression of the trimmed text of `cell` in the row
/// `[data-testid={testid}]` whose `data-name` is `name` (`null` when there
/// is none): `game-row`, `detail-player` or `detail-rule`.
pub fn cell(testid: &str, name: &str, cell: &str) -> String {
    format!(
        "(() => {{ const r = Array.from(document.querySelectorAll('[data-testid={testid}]'))\
         .find(r => r.dataset.name === {}); const c = r && r.querySelector({});\
         return c ? c.textContent.trim() : null; }})()",
        js_str(name),
        js_str(cell)
    )
}

/// A2S player times as the page shows them: `m:ss`, or `h:mm:ss` from an
/// hour on.
pub fn clock(secs: u32) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// The kind of [`GamesPage`].
pub enum Games {}

/// A browser showing the list page with other games' sources.
pub type GamesPage<'a> = Page<'a, Games>;

impl GamesPage<'_> {
    /// Clicks the tab of source `id`.
    pub async fn select_tab(&self, id: &str) {
        self.click(&tab(id)).await;
    }

    /// The `aria-selected` of the tab of source `id`.
    pub async fn tab_selected(&self, id: &str) -> Option<String> {
        self.attr(&tab(id), "aria-selected").await
    }

    /// The text of `class` in the game row `name` (`null` when there is
    /// none).
    pub async fn cell(&self, name: &str, class: &str) -> Value {
        self.eval(&cell("game-row", name, class)).await
    }

    /// The text of `class` in the detail view's row `name` of `testid`
    /// (`detail-player`, `detail-rule`).
    pub async fn detail_cell(&self, testid: &str, name: &str, class: &str) -> Value {
        self.eval(&cell(testid, name, class)).await
    }

    /// Waits until the text of `class` in game row `name` satisfies `ok`.
    pub async fn wait_cell(&self, name: &str, class: &str, ok: impl Fn(&str) -> bool) -> String {
        let expr = cell("game-row", name, class);
        until(&format!("{class} of {name:?}"), || {
            let (expr, ok) = (&expr, &ok);
            async move {
                let seen = self.eval(expr).await;
                match seen.as_str() {
                    Some(t) if ok(t) => Ok(t.to_owned()),
                    _ => Err(seen.to_string()),
                }
            }
        })
        .await
    }

    /// Clicks the sort button of the game table's `column`.
    pub async fn sort_by(&self, column: &str) {
        self.click(&format!("th[data-sort={column}] button.sort"))
            .await;
    }

    /// The `aria-sort` of the game table's `column` header.
    pub async fn aria_sort(&self, column: &str) -> Option<String> {
        self.attr(&format!("th[data-sort={column}]"), "aria-sort")
            .await
    }

    /// Opens the detail view of the game row `name`.
    pub async fn open_detail(&self, name: &str) {
        self.click(&format!("{} button.open-detail", row(name)))
            .await;
    }
}
