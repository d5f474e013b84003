//! One page of an arranged list as a table shows it (both tables take
//! it), how many of its rows are drawn yet, and the favourites' "last
//! seen" that every list view refreshes.

use std::rc::Rc;

use gloo_timers::callback::Timeout;
use yew::prelude::*;

use crate::{
    favourites::{Favourite, MarkAction, Marks},
    list::{page_count, page_slice, Arranged},
    query::{ListQuery, SortKey},
    services::browser,
};

/// Row indices the arrangement marks: favourites not matching the filters
/// and hidden rows shown on request (both short lists).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MarkFlags {
    pub unmatched: Rc<Vec<usize>>,
    pub hidden: Rc<Vec<usize>>,
}

impl MarkFlags {
    pub fn of(a: &Arranged) -> Self {
        MarkFlags {
            unmatched: Rc::new(a.unmatched.clone()),
            hidden: Rc::new(a.hidden_shown.clone()),
        }
    }
}

/// One page of an arranged list as a table shows it, with the marks and
/// the player's favourites that are not in the list; both tables take it.
#[derive(Clone, PartialEq)]
pub struct TableView {
    /// Indices of the rows on this page, in order.
    pub shown: Rc<Vec<usize>>,
    /// Favourites at the start of `shown`.
    pub pinned: usize,
    pub marks: MarkFlags,
    /// Favourites not in the list, shown after the pinned ones.
    pub offline: Rc<Vec<Favourite>>,
    pub query: ListQuery,
    pub on_sort: Callback<SortKey>,
    /// Star and hide go here; without it the rows have no such buttons.
    pub on_mark: Option<Callback<MarkAction>>,
    /// The page shown (the query's, clamped) and the number of pages.
    pub page: usize,
    pub pages: usize,
    /// How many of the body's rows (in its order: pinned, offline, the
    /// rest) are drawn now; see [`use_rows_drawn`].
    pub drawn: usize,
}

impl TableView {
    /// The query's page of `arranged`; on the first page, the favourites
    /// of `source` that are not in the list when `offline` says the list
    /// is known.
    pub fn new(
        arranged: &Arranged,
        query: &ListQuery,
        on_sort: Callback<SortKey>,
        marks: &Marks,
        on_mark: Callback<MarkAction>,
        (source, offline): (&str, bool),
    ) -> Self {
        let (page, slice) = page_slice(&arranged.idx, query.page);
        let offline = if page == 0 && offline {
            marks
                .favourites_of(source)
                .filter(|f| !arranged.present.iter().any(|(k, _)| *k == f.key))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        TableView {
            shown: Rc::new(slice.to_vec()),
            pinned: if page == 0 { arranged.pinned } else { 0 },
            marks: MarkFlags::of(arranged),
            offline: Rc::new(offline),
            query: query.clone(),
            on_sort,
            on_mark: Some(on_mark),
            page,
            pages: page_count(arranged.idx.len()),
            drawn: usize::MAX,
        }
    }

    /// Nothing to show: no row passes and no favourite is missing.
    pub fn is_empty(&self) -> bool {
        self.shown.is_empty() && self.offline.is_empty()
    }

    /// The body's rows: those on the page and the favourites not in the
    /// list.
    pub fn len(&self) -> usize {
        self.shown.len() + self.offline.len()
    }

    /// Whether every row of the body is drawn.
    pub fn complete(&self) -> bool {
        self.drawn >= self.len()
    }
}

/// Rows a table draws in the render that first shows them: what a
/// phone's screen holds (three or four cards under the filters).
pub const FIRST_ROWS: usize = 5;

/// Rows each later render adds, at least and at most; the first of them
/// adds the least.
pub const MORE_ROWS: (usize, usize) = (4, 40);

/// What a later render may spend drawing rows (ms): a few times under the
/// 50 ms a browser counts as a long task, so that a phone's slower CPU
/// (Lighthouse's counts each task four times over) stays under it too.
const SLICE_MS: f64 = 8.0;

/// How many of a table's `total` rows to draw now. Drawing a row's
/// components is the page's costliest work (60 rows are a tenth of a
/// second on a laptop, four times that on a phone), so a list's first
/// [`FIRST_ROWS`] are drawn at once and the rest a few at a time, each
/// render in a task of its own (a zero timeout after the last): no task
/// holds the page for long, and a tap is answered in between. How many a
/// render adds follows how long the last one took per row ([`SLICE_MS`],
/// within [`MORE_ROWS`]), so a fast machine draws a long page in a few
/// renders. The count only grows: a list that changes afterwards is drawn
/// whole, but for rows beyond those drawn so far.
#[hook]
pub fn use_rows_drawn(total: usize) -> usize {
    let limit = use_state_eq(|| FIRST_ROWS);
    // When the last render adding rows was asked for, and from how many:
    // a measurement between a render and the next, not derived from the
    // list, so neither the list's store nor a memo can hold it.
    let asked = use_mut_ref(|| None::<(f64, usize)>);
    {
        let limit = limit.clone();
        use_effect_with((*limit, total), move |&(now, total)| {
            let step = match asked.borrow_mut().take() {
                Some((at, from)) if now > from => {
                    let per_row = (browser::perf_now() - at).max(0.01) / (now - from) as f64;
                    ((SLICE_MS / per_row) as usize).clamp(MORE_ROWS.0, MORE_ROWS.1)
                }
                _ => MORE_ROWS.0,
            };
            let more = (now < total).then(|| {
                Timeout::new(0, move || {
                    *asked.borrow_mut() = Some((browser::perf_now(), now));
                    limit.set(now.saturating_add(step));
                })
            });
            move || drop(more)
        });
    }
    (*limit).min(total)
}

/// Refreshes the "last seen" time and name of the favourites in a list
/// (`present`, from its arrangement) whenever the list or the marks
/// change, through `on_mark`.
#[hook]
pub fn use_favourites_seen(
    deps: (u32, u32),
    present: Vec<(String, String)>,
    at: Option<f64>,
    on_mark: Callback<MarkAction>,
) {
    use_effect_with(deps, move |_| {
        if let (Some(at_ms), false) = (at, present.is_empty()) {
            on_mark.emit(MarkAction::Seen {
                pairs: present,
                at_ms,
            });
        }
    });
}
