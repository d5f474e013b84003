//! The server table: sortable headings and keyed rows for one page, the
//! player's favourites pinned on top (offline ones greyed).

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{
        list_table::{list_table, TableParts, TableView},
        server_row::ServerRow,
    },
    i18n::{t, K},
    listing::Row,
    query::SortKey,
};

/// Props of [`ServerTable`]. Compared by hand: the derived comparison would
/// walk all of `rows` (thousands of entries) whenever the list is replaced.
#[derive(Properties)]
pub struct ServerTableProps {
    pub rows: Rc<Vec<Row>>,
    pub view: TableView,
    /// The list version, to tell which rows flash.
    pub version: u32,
    /// Keys of rows that appeared a moment ago.
    #[prop_or_default]
    pub new_keys: Rc<Vec<Rc<str>>>,
}

impl PartialEq for ServerTableProps {
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version
            && Rc::ptr_eq(&self.rows, &other.rows)
            && self.view == other.view
            && self.new_keys == other.new_keys
    }
}

#[component]
pub fn ServerTable(props: &ServerTableProps) -> Html {
    let flash = if props.version.is_multiple_of(2) {
        "flash-a"
    } else {
        "flash-b"
    };
    let parts = TableParts {
        class: None,
        caption: t(K::TableCaption),
        columns: &SortKey::LOBBY,
    };
    list_table(parts, &props.view, &|i, marks| {
        let row = props.rows.get(i)?;
        let f = (row.changed_in != 0 && row.changed_in == props.version).then_some(flash);
        Some(html! {
            <ServerRow key={row.key.clone()} row={row.clone()} flash={f} {marks}
                new={props.new_keys.contains(&row.key)}
                dispatcher={props.view.dispatcher.clone()} />
        })
    })
}
