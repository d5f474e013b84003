//! A sortable column heading, shared by the lobby's and other games' tables.

use yew::prelude::*;

use crate::query::{ListQuery, SortKey};

/// Props of [`SortHeading`].
#[derive(Properties, PartialEq)]
pub struct SortHeadingProps {
    pub column: SortKey,
    pub query: ListQuery,
    pub on_sort: Callback<SortKey>,
}

/// A `<th>` whose button sorts by its column (again: the other way), with
/// `aria-sort` on the active one.
#[component]
pub fn SortHeading(props: &SortHeadingProps) -> Html {
    let key = props.column;
    let q = &props.query;
    let active = q.sort == key;
    let aria = if active { q.dir.aria() } else { "none" };
    let onclick = {
        let cb = props.on_sort.clone();
        Callback::from(move |_: MouseEvent| cb.emit(key))
    };
    let arrow = match (active, q.dir.aria()) {
        (false, _) => "↕",
        (true, "ascending") => "▲",
        (true, _) => "▼",
    };
    html! {
        <th scope="col" data-sort={key.as_str()} aria-sort={aria} class={classes!("c-".to_owned() + key.as_str(), active.then_some("active"))}>
            <button type="button" class="sort" {onclick}>
                { key.label() }<span class="arrow" aria-hidden="true">{ arrow }</span>
            </button>
        </th>
    }
}
