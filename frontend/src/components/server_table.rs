//! The server table: sortable headings and keyed rows for one page, the
//! player's favourites pinned on top (offline ones greyed).

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{
        list_table::{list_table, MarkFlags, TableParts},
        server_row::ServerRow,
    },
    favourites::{Favourite, MarksState},
    i18n::{t, K},
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
    /// Favourites at the start of `shown`.
    #[prop_or_default]
    pub pinned: usize,
    #[prop_or_default]
    pub marks: MarkFlags,
    /// Favourites not in the list, shown after the pinned ones.
    #[prop_or_default]
    pub offline: Rc<Vec<Favourite>>,
    /// Keys of rows that appeared a moment ago.
    #[prop_or_default]
    pub new_keys: Rc<Vec<Rc<str>>>,
    #[prop_or_default]
    pub dispatcher: Option<UseReducerDispatcher<MarksState>>,
}

impl PartialEq for ServerTableProps {
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version
            && Rc::ptr_eq(&self.rows, &other.rows)
            && self.shown == other.shown
            && self.query == other.query
            && self.on_sort == other.on_sort
            && self.pinned == other.pinned
            && self.marks == other.marks
            && self.offline == other.offline
            && self.new_keys == other.new_keys
            && self.dispatcher == other.dispatcher
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
    list_table(
        TableParts {
            class: None,
            caption: t(K::TableCaption),
            columns: &SortKey::LOBBY,
            query: q,
            on_sort: &props.on_sort,
            shown: &props.shown,
            pinned: props.pinned,
            marks: &props.marks,
            offline: &props.offline,
            dispatcher: props.dispatcher.as_ref(),
        },
        &|i, marks| {
            let row = props.rows.get(i)?;
            let f = (row.changed_in != 0 && row.changed_in == props.version).then_some(flash);
            Some(html! {
                <ServerRow key={row.key.clone()} row={row.clone()} flash={f} {marks}
                    new={props.new_keys.contains(&row.key)}
                    dispatcher={props.dispatcher.clone()} />
            })
        },
    )
}
