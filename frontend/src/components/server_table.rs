//! The server table: sortable headings and keyed rows for one page.

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{server_row::ServerRow, sort_heading::sort_heading},
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
    html! {
        <table class="servers">
            <caption class="visually-hidden">{"Game servers. Click a column heading to sort."}</caption>
            <thead>
                <tr>
                    { for SortKey::LOBBY.into_iter().map(|column| sort_heading(column, q, &props.on_sort)) }
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
