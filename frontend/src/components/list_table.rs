//! What the lobby's table and the game tables share: the headings, the
//! body's order (pinned favourites, favourites not in the list, the rest)
//! of a page ([`TableView`]), each row's marks (star, hide, "not
//! matching") and the row of a favourite that is not in the list.

use yew::prelude::*;

use crate::components::icon::{Icon, SvgIcon};

use crate::{
    components::{sort_heading::sort_heading, star::marks_buttons},
    favourites::{Favourite, MarkAction},
    i18n::{ago, t, tf, K},
    query::SortKey,
    services::browser,
    views::table::TableView,
};

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
    /// server with mark key `key`; none without a place for their clicks.
    pub fn buttons(
        self,
        on_mark: Option<&Callback<MarkAction>>,
        key: impl FnOnce() -> String,
        name: &str,
    ) -> (Html, Html) {
        on_mark
            .map(|m| marks_buttons(m, key(), name.to_owned(), self.favourite, self.hidden))
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

/// What differs between the tables besides their rows' cells.
pub struct TableParts {
    /// Extra class of the `<table>` (beside `servers`).
    pub class: Option<&'static str>,
    pub caption: &'static str,
    /// The sortable columns, in table order (the address column follows).
    pub columns: &'static [SortKey],
}

/// The table: headings, then the pinned favourites, the favourites not in
/// the list and the rest, each row drawn by `row` (index, marks); as many
/// of them as the view says are drawn yet (`aria-busy` until all are).
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
    let on_mark = view.on_mark.as_ref();
    let body = view.shown[..pinned]
        .iter()
        .filter_map(draw)
        .chain(
            view.offline
                .iter()
                .map(|f| offline_favourite(f, on_mark, span)),
        )
        .chain(view.shown[pinned..].iter().filter_map(draw))
        .take(view.drawn);
    let busy = (!view.complete()).then_some("true");
    html! {
        <table class={classes!("servers", parts.class)} aria-busy={busy}>
            <caption class="visually-hidden">{ parts.caption }</caption>
            <thead>
                <tr>
                    { for parts.columns.iter().map(|&column| sort_heading(column, &view.query, &view.on_sort)) }
                    <th scope="col" class="c-addr">{ t(K::Address) }</th>
                </tr>
            </thead>
            <tbody>{ for body }</tbody>
        </table>
    }
}

/// A favourite that left the list: greyed, "offline — last seen …", until
/// its star is taken off; `span` is the number of columns after the name.
/// A plain function, not a component: one less component in the bundle.
pub fn offline_favourite(f: &Favourite, on_mark: Option<&Callback<MarkAction>>, span: u32) -> Html {
    let unstar = on_mark.cloned().map(|on_mark| {
        let key = f.key.clone();
        Callback::from(move |_: MouseEvent| {
            on_mark.emit(MarkAction::ToggleFavourite {
                key: key.clone(),
                name: String::new(),
                now_ms: 0.0,
            })
        })
    });
    let label = tf(K::StarRemove, &[&f.name]);
    html! {
        <tr key={format!("offline\u{1f}{}", f.key)} data-testid="offline-favourite"
            data-name={f.name.clone()} class="fav offline-fav">
            <th scope="row" class="c-name">
                <button type="button" class="star on" aria-pressed="true" onclick={unstar}
                    aria-label={label.clone()} title={label}><SvgIcon icon={Icon::Star} /></button>
                <span dir="auto">{ &f.name }</span>
            </th>
            <td colspan={span.to_string()} class="c-offline muted" data-testid="offline-note">
                { tf(K::OfflineSeen, &[&ago(browser::now_ms(), f.seen_ms)]) }
            </td>
        </tr>
    }
}
