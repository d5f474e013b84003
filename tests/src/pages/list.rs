//! The list page (`/`, `/embed`): the lobby's servers as rows, the sort
//! headers, the filters, favourites and hidden servers.

use super::Page;
use crate::{browser::css_str, until};

/// The row of server `name` (its `data-name`).
pub fn row(name: &str) -> String {
    format!("[data-testid=server-row][data-name={}]", css_str(name))
}

/// The kind of [`ListPage`].
pub enum List {}

/// A browser showing the list page.
pub type ListPage<'a> = Page<'a, List>;

impl ListPage<'_> {
    /// The names of the listed servers, in page order, once the table is
    /// drawn whole (a long list's rows are drawn a few at a time, the
    /// table `aria-busy` until the last).
    pub async fn rows(&self) -> Vec<String> {
        until("the list drawn whole", || async {
            let v = self
                .js(
                    "if (document.querySelector('table[aria-busy=true]')) return null;\
                     return Array.from(document.querySelectorAll('[data-testid=server-row]'))\
                     .map(e => e.dataset.name);",
                )
                .await;
            serde_json::from_value::<Option<Vec<String>>>(v)
                .ok()
                .flatten()
                .ok_or_else(|| "the table still drawing its rows".to_owned())
        })
        .await
    }

    /// Waits until the listed rows are exactly `expected`, in order.
    pub async fn wait_rows(&self, expected: &[&str]) {
        until(&format!("the rows {expected:?}"), || async move {
            let rows = self.rows().await;
            if rows == expected {
                Ok(())
            } else {
                Err(format!("{rows:?}"))
            }
        })
        .await
    }

    /// Waits until the listed rows are exactly `expected`, in any order.
    pub async fn wait_rows_unordered(&self, expected: &[&str]) {
        let what = format!("the rows {expected:?} in any order");
        until(&what, || async {
            let rows = self.rows().await;
            if rows.len() == expected.len() && expected.iter().all(|e| rows.iter().any(|r| r == e))
            {
                Ok(())
            } else {
                Err(format!("{rows:?}"))
            }
        })
        .await
    }

    /// Waits until the list contains (or, with `present = false`, lacks) `name`.
    pub async fn wait_listed(&self, name: &str, present: bool) {
        let what = format!(
            "{name:?} to be {}",
            if present { "listed" } else { "unlisted" }
        );
        until(&what, || async move {
            let rows = self.rows().await;
            if rows.iter().any(|r| r == name) == present {
                Ok(())
            } else {
                Err(format!("{rows:?}"))
            }
        })
        .await
    }

    /// Whether the page shows `n` rows (the rows seen, if not): a probe
    /// for [`crate::until`] and [`crate::holds_for`].
    pub async fn rows_are(&self, n: usize) -> Result<(), String> {
        let rows = self.rows().await;
        if rows.len() == n {
            Ok(())
        } else {
            Err(format!("{rows:?}"))
        }
    }

    /// Waits until the page shows `n` rows.
    pub async fn wait_row_count(&self, n: usize) {
        until(&format!("{n} rows"), || self.rows_are(n)).await
    }

    /// Waits until the summary line contains `text` ("5 servers · …").
    pub async fn wait_summary(&self, text: &str) -> String {
        self.wait_text("[data-testid=summary]", text).await
    }

    /// Waits for the empty list's message.
    pub async fn wait_empty(&self) {
        self.wait_text("[data-testid=empty]", "No servers online")
            .await;
    }

    /// Clicks the first element matching `css` inside the row of `name`.
    pub async fn click_in_row(&self, name: &str, css: &str) {
        self.click(&format!("{} {css}", row(name))).await;
    }

    /// Stars (or unstars) server `name`.
    pub async fn star(&self, name: &str) {
        self.click_in_row(name, "[data-testid=star]").await;
    }

    /// Clicks the sort button of `column` (`name`, `players`, `free`, …).
    pub async fn sort_by(&self, column: &str) {
        self.click(&format!("th[data-sort={column}] button")).await;
    }

    /// The `aria-sort` of `column`'s header (`ascending`, `descending`,
    /// `none`).
    pub async fn aria_sort(&self, column: &str) -> Option<String> {
        self.attr(&format!("th[data-sort={column}]"), "aria-sort")
            .await
    }

    /// Whether the checkbox `css` is ticked (`None`: no such checkbox).
    pub async fn checked(&self, css: &str) -> Option<bool> {
        self.prop(css, "checked").await.as_bool()
    }
}
