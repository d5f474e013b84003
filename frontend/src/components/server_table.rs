//! The server table: sortable headings and keyed rows for one page.

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::server_row::ServerRow,
    listing::Row,
    query::{ListQuery, SortKey},
};

/// Props of [`ServerTable`]. Compared by hand: the derived comparison would
/// walk all of `rows` (thousands of entries) whenever the list is replaced.
#[derive(Properties)]
pub struct ServerTableProps {
    pub rows: Rc<Vec<Row>>,
    /// Indices into `rows` to show, in order.
    pub shown: Rc<Vec<usize>>,
    pub query: ListQuery,
    /// The list version, to tell which rows flash.
    pub version: u32,
    pub on_sort: Callback<SortKey>,
}

impl PartialEq for ServerTableProps {
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version
            && Rc::ptr_eq(&self.rows, &other.rows)
            && self.shown == other.shown
            && self.query == other.query
            && self.on_sort == other.on_sort
    }
}

#[component]
pub fn ServerTable(props: &ServerTableProps) -> Html {
    let q = &props.query;
    let flash = if props.version.is_multiple_of(2) {
        "flash-a"
    } else {
        "flash-b"
    };
    let heading = |key: SortKey| {
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
    };
    html! {
        <table class="servers">
            <caption class="visually-hidden">{"Game servers. Click a column heading to sort."}</caption>
            <thead>
                <tr>
                    { for SortKey::ALL.into_iter().map(heading) }
                    <th scope="col" class="c-addr">{"Address"}</th>
                </tr>
            </thead>
            <tbody>
                { for props.shown.iter().filter_map(|&i| props.rows.get(i)).map(|row| {
                    let f = (row.changed_in != 0 && row.changed_in == props.version).then_some(flash);
                    html! { <ServerRow key={row.key.clone()} row={row.clone()} flash={f} /> }
                }) }
            </tbody>
        </table>
    }
}
