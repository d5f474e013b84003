//! The server table: sortable headings and keyed rows for one page, the
//! player's favourites pinned on top (offline ones greyed).

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{
        list_table::{list_table, TableParts},
        server_row::ServerRow,
    },
    i18n::{t, K},
    list::store::ListView,
    query::SortKey,
    views::table::TableView,
};

/// Props of [`ServerTable`]. `ListView` compares without walking its rows
/// (thousands of entries).
#[derive(Properties, PartialEq)]
pub struct ServerTableProps {
    /// The rows, and which of them the last update changed (they flash).
    pub shown: ListView,
    pub view: TableView,
    /// Keys of rows that appeared a moment ago.
    #[prop_or_default]
    pub new_keys: Rc<Vec<Rc<str>>>,
}

#[component]
pub fn ServerTable(props: &ServerTableProps) -> Html {
    let shown = &props.shown;
    let flash = if shown.version().is_multiple_of(2) {
        "flash-a"
    } else {
        "flash-b"
    };
    let parts = TableParts {
        class: None,
        caption: t(K::TableCaption),
        columns: &SortKey::LOBBY,
    };
    let rows = shown.rows();
    list_table(parts, &props.view, &|i, marks| {
        let row = rows.get(i)?;
        let f = shown.is_changed(row.id).then_some(flash);
        Some(html! {
            <ServerRow key={row.key.clone()} row={row.clone()} flash={f} {marks}
                new={props.new_keys.contains(&row.key)}
                on_mark={props.view.on_mark.clone()} />
        })
    })
}
