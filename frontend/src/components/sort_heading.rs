//! A sortable column heading, shared by the lobby's and other games' tables.

use yew::prelude::*;

use crate::query::{ListQuery, SortKey};

/// A `<th>` whose button sorts by `column` (again: the other way), with
/// `aria-sort` on the active one. A plain function rather than a
/// component, so the heading changes in the same render as the rows it
/// sorts (a child component would render a moment later).
pub fn sort_heading(column: SortKey, query: &ListQuery, on_sort: &Callback<SortKey>) -> Html {
    let active = query.sort == column;
    let aria = if active { query.dir.aria() } else { "none" };
    let onclick = on_sort.reform(move |_: MouseEvent| column);
    let arrow = match (active, query.dir.aria()) {
        (false, _) => "↕",
        (true, "ascending") => "▲",
        (true, _) => "▼",
    };
    html! {
        <th scope="col" data-sort={column.as_str()} aria-sort={aria} class={classes!("c-".to_owned() + column.as_str(), active.then_some("active"))}>
            <button type="button" class="sort" {onclick}>
                { column.label() }<span class="arrow" aria-hidden="true">{ arrow }</span>
            </button>
        </th>
    }
}
