//! What the lobby's table and the game tables share: the headings, the
//! body's order (pinned favourites, favourites not in the list, the rest)
//! and each row's marks (star, hide, "not matching").

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{server_row::offline_favourite, sort_heading::sort_heading, star::marks_buttons},
    favourites::{Favourite, MarksState},
    i18n::{t, K},
    list::Arranged,
    query::{ListQuery, SortKey},
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

/// One row's marks, a prop of both tables' rows.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RowMarks {
    pub favourite: bool,
    /// A favourite the filters would hide.
    pub unmatched: bool,
    /// Hidden, shown because "show" is on.
    pub hidden: bool,
}

impl RowMarks {
    /// The row's classes for its marks.
    pub fn classes(self) -> Classes {
        classes!(
            self.favourite.then_some("fav"),
            self.unmatched.then_some("unmatched"),
            self.hidden.then_some("hidden-row"),
        )
    }

    /// The star (before the name) and hide (after it) buttons of the
    /// server with mark key `key`; none without a dispatcher.
    pub fn buttons(
        self,
        d: Option<&UseReducerDispatcher<MarksState>>,
        key: impl FnOnce() -> String,
        name: &str,
    ) -> (Html, Html) {
        d.map(|d| marks_buttons(d, key(), name.to_owned(), self.favourite, self.hidden))
            .unwrap_or_default()
    }

    /// "not matching" after the name of a favourite the filters would hide.
    pub fn badge(self) -> Html {
        if self.unmatched {
            html! { <span class="badge unmatched-badge" data-testid="unmatched">{ t(K::NotMatching) }</span> }
        } else {
            html! {}
        }
    }
}

/// What a table shows besides its rows' cells.
pub struct TableParts<'a> {
    /// Extra class of the `<table>` (beside `servers`).
    pub class: Option<&'static str>,
    pub caption: &'static str,
    /// The sortable columns, in table order (the address column follows).
    pub columns: &'a [SortKey],
    pub query: &'a ListQuery,
    pub on_sort: &'a Callback<SortKey>,
    /// Indices of the rows to show, in order.
    pub shown: &'a [usize],
    /// Favourites at the start of `shown`.
    pub pinned: usize,
    pub marks: &'a MarkFlags,
    /// Favourites not in the list, shown after the pinned ones.
    pub offline: &'a [Favourite],
    pub dispatcher: Option<&'a UseReducerDispatcher<MarksState>>,
}

/// The table: headings, then the pinned favourites, the favourites not in
/// the list and the rest, each row drawn by `row` (index, marks).
pub fn list_table(parts: TableParts, row: &dyn Fn(usize, RowMarks) -> Option<Html>) -> Html {
    let pinned = parts.pinned.min(parts.shown.len());
    let draw = |&i: &usize| {
        row(
            i,
            RowMarks {
                favourite: parts.shown[..pinned].contains(&i),
                unmatched: parts.marks.unmatched.contains(&i),
                hidden: parts.marks.hidden.contains(&i),
            },
        )
    };
    let span = parts.columns.len() as u32;
    html! {
        <table class={classes!("servers", parts.class)}>
            <caption class="visually-hidden">{ parts.caption }</caption>
            <thead>
                <tr>
                    { for parts.columns.iter().map(|&column| sort_heading(column, parts.query, parts.on_sort)) }
                    <th scope="col" class="c-addr">{ t(K::Address) }</th>
                </tr>
            </thead>
            <tbody>
                { for parts.shown[..pinned].iter().filter_map(draw) }
                { for parts.offline.iter().map(|f| offline_favourite(f, parts.dispatcher, span)) }
                { for parts.shown[pinned..].iter().filter_map(draw) }
            </tbody>
        </table>
    }
}
