//! What the lobby's table and the game tables share: the headings, the
//! body's order (pinned favourites, favourites not in the list, the rest),
//! each row's marks (star, hide, "not matching") and the row of a
//! favourite that is not in the list.

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{sort_heading::sort_heading, star::marks_buttons},
    favourites::{Favourite, MarkAction, Marks},
    i18n::{ago, t, tf, K},
    list::{page_count, page_slice, Arranged},
    query::{ListQuery, SortKey},
    services::browser,
    settings::{Settings, SettingsAction},
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
        d: Option<&UseReducerDispatcher<Settings>>,
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
    pub dispatcher: Option<UseReducerDispatcher<Settings>>,
    /// The page shown (the query's, clamped) and the number of pages.
    pub page: usize,
    pub pages: usize,
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
        dispatcher: UseReducerDispatcher<Settings>,
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
            dispatcher: Some(dispatcher),
            page,
            pages: page_count(arranged.idx.len()),
        }
    }

    /// Nothing to show: no row passes and no favourite is missing.
    pub fn is_empty(&self) -> bool {
        self.shown.is_empty() && self.offline.is_empty()
    }
}

/// What differs between the tables besides their rows' cells.
pub struct TableParts {
    /// Extra class of the `<table>` (beside `servers`).
    pub class: Option<&'static str>,
    pub caption: &'static str,
    /// The sortable columns, in table order (the address column follows).
    pub columns: &'static [SortKey],
}

/// The table: headings, then the pinned favourites, the favourites not in
/// the list and the rest, each row drawn by `row` (index, marks).
pub fn list_table(
    parts: TableParts,
    view: &TableView,
    row: &dyn Fn(usize, RowMarks) -> Option<Html>,
) -> Html {
    let pinned = view.pinned.min(view.shown.len());
    let draw = |&i: &usize| {
        row(
            i,
            RowMarks {
                favourite: view.shown[..pinned].contains(&i),
                unmatched: view.marks.unmatched.contains(&i),
                hidden: view.marks.hidden.contains(&i),
            },
        )
    };
    let span = parts.columns.len() as u32;
    let dispatcher = view.dispatcher.as_ref();
    html! {
        <table class={classes!("servers", parts.class)}>
            <caption class="visually-hidden">{ parts.caption }</caption>
            <thead>
                <tr>
                    { for parts.columns.iter().map(|&column| sort_heading(column, &view.query, &view.on_sort)) }
                    <th scope="col" class="c-addr">{ t(K::Address) }</th>
                </tr>
            </thead>
            <tbody>
                { for view.shown[..pinned].iter().filter_map(draw) }
                { for view.offline.iter().map(|f| offline_favourite(f, dispatcher, span)) }
                { for view.shown[pinned..].iter().filter_map(draw) }
            </tbody>
        </table>
    }
}

/// A favourite that left the list: greyed, "offline — last seen …", until
/// its star is taken off; `span` is the number of columns after the name.
/// A plain function, not a component: one less component in the bundle.
pub fn offline_favourite(
    f: &Favourite,
    dispatcher: Option<&UseReducerDispatcher<Settings>>,
    span: u32,
) -> Html {
    let unstar = dispatcher.cloned().map(|d| {
        let key = f.key.clone();
        Callback::from(move |_: MouseEvent| {
            d.dispatch(SettingsAction::Mark(MarkAction::ToggleFavourite {
                key: key.clone(),
                name: String::new(),
                now_ms: 0.0,
            }))
        })
    });
    let label = tf(K::StarRemove, &[&f.name]);
    html! {
        <tr key={format!("offline\u{1f}{}", f.key)} data-testid="offline-favourite"
            data-name={f.name.clone()} class="fav offline-fav">
            <th scope="row" class="c-name">
                <button type="button" class="star on" aria-pressed="true" onclick={unstar}
                    aria-label={label.clone()} title={label}>{"★"}</button>
                <span dir="auto">{ &f.name }</span>
            </th>
            <td colspan={span.to_string()} class="c-offline muted" data-testid="offline-note">
                { tf(K::OfflineSeen, &[&ago(browser::now_ms(), f.seen_ms)]) }
            </td>
        </tr>
    }
}

/// Refreshes the "last seen" time and name of the favourites in a list
/// (`present`, from its arrangement) whenever the list or the marks change.
#[hook]
pub fn use_favourites_seen(
    deps: (u32, u32),
    present: Vec<(String, String)>,
    at: Option<f64>,
    dispatcher: UseReducerDispatcher<Settings>,
) {
    use_effect_with(deps, move |_| {
        if let (Some(at_ms), false) = (at, present.is_empty()) {
            dispatcher.dispatch(SettingsAction::Mark(MarkAction::Seen {
                pairs: present,
                at_ms,
            }));
        }
    });
}
