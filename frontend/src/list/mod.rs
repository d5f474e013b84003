//! What the lobby table and the game tables do alike with their rows:
//! filtering, sorting, arranging around the player's marks, paging and
//! the summary line, once, over any row that implements [`ListRow`]. The
//! lobby (`lobby`, whose entries the page's one list keeps in `store`) and
//! the game sources (`games`) only say how their rows answer. Plain
//! functions over plain data, tested natively.

pub mod arrange;
pub mod incremental;
pub mod lobby;
pub mod page;
pub mod store;

use std::{cmp::Ordering, rc::Rc};

pub use arrange::{arrange, Arranged};
pub use page::{
    address_label, page_count, page_slice, resummarize, summarize, summary_text, Summary, PAGE_SIZE,
};

use crate::{
    favourites::Marks,
    i18n::K,
    query::{ListQuery, SortKey},
};

/// A row of a server table as the shared list code sees it; each table's
/// own columns and filters stay with the row.
pub trait ListRow {
    /// What the summary line's third count counts (`K::OpenCount`,
    /// `K::OnlineCount`).
    const COUNTED: K;

    /// Unique within the list and stable across updates: Yew's key and the
    /// last tie-break of every order.
    fn key(&self) -> &Rc<str>;
    /// The name as shown, for the favourites' "last seen" record.
    fn title(&self) -> &str;
    /// The name lowercased once, for search and sorting.
    fn name_lc(&self) -> &str;
    /// Another lowercased text the search looks in (address, game, map).
    fn search_lc(&self) -> Option<&str>;
    /// Players and the slots when known (`None`: the server did not say).
    fn players(&self) -> (u32, Option<u32>);
    /// Whether the server answers; those that do not come last and count
    /// as empty.
    fn online(&self) -> bool;
    /// Whether the summary's third count counts this row.
    fn counted(&self) -> bool;
    /// The key of the server for favourites and hiding within `source`.
    fn mark_key(&self, source: &str) -> String;
    /// Whether the row passes the filters only its table has.
    fn own_filters(&self, q: &ListQuery) -> bool;
    /// The order of the row's own columns; `Equal` for the other table's
    /// columns (those sort by name).
    fn compare_own(&self, other: &Self, key: SortKey) -> Ordering;
}

/// Free slots; negative when players are queued (or the slots unknown).
pub fn free_slots<T: ListRow>(row: &T) -> i64 {
    let (current, max) = row.players();
    i64::from(max.unwrap_or(0)) - i64::from(current)
}

/// Whether a row passes the query's search and filters; an offline server
/// counts as empty, one without known slots is never full.
pub fn matches<T: ListRow>(row: &T, q: &ListQuery, search_lc: &str) -> bool {
    let (current, max) = row.players();
    if q.hide_full && max.is_some_and(|m| current >= m) {
        return false;
    }
    if q.hide_empty && (current == 0 || !row.online()) {
        return false;
    }
    if !row.own_filters(q) {
        return false;
    }
    search_lc.is_empty()
        || row.name_lc().contains(search_lc)
        || row.search_lc().is_some_and(|s| s.contains(search_lc))
}

fn compare<T: ListRow>(a: &T, b: &T, key: SortKey) -> Ordering {
    match key {
        SortKey::Name => Ordering::Equal,
        SortKey::Players => a.players().0.cmp(&b.players().0),
        SortKey::Free => free_slots(a).cmp(&free_slots(b)),
        own => a.compare_own(b, own),
    }
}

/// The view's order: servers that answer first (a player cannot join the
/// others), then the column in the query's direction, ties broken by name
/// (always A→Z unless sorting by name) and then by key, so the order is
/// total and rows do not jump between updates.
pub fn order<T: ListRow>(a: &T, b: &T, q: &ListQuery) -> Ordering {
    b.online().cmp(&a.online()).then_with(|| {
        q.order(compare(a, b, q.sort), || {
            a.name_lc()
                .cmp(b.name_lc())
                .then_with(|| a.key().cmp(b.key()))
        })
    })
}

/// The rows to show, filtered and sorted, favourites of `source` pinned
/// first and never filtered out, hidden ones left out (see [`arrange`]).
pub fn arrange_rows<T: ListRow>(
    rows: &[T],
    q: &ListQuery,
    marks: &Marks,
    source: &str,
) -> Arranged {
    let search_lc = q.search.trim().to_lowercase();
    arrange(
        rows.len(),
        marks,
        q.favourites_only,
        &|i| rows[i].mark_key(source),
        &|i| rows[i].title().to_owned(),
        &|i| matches(&rows[i], q, &search_lc),
        &|i, j| order(&rows[i], &rows[j], q),
    )
}

/// Indices into `rows` of the rows to show without any marks.
pub fn visible<T: ListRow>(rows: &[T], q: &ListQuery) -> Vec<usize> {
    arrange_rows(rows, q, &Marks::default(), "").idx
}
