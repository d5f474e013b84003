//! The lobby's own list as its view shows it: the rows filtered, sorted,
//! pinned and paged as the query says, the summary, which rows are new,
//! and what to show where the table goes.

use std::{cell::RefCell, rc::Rc};

use protocol::bridge::MasterState;
use yew::prelude::*;

use crate::{
    contexts::{
        lobby::use_lobby,
        settings::{use_settings, SettingsHandle},
    },
    fresh::Fresh,
    i18n::{t, K},
    list::{
        incremental::{arrange_after, LastArranged},
        lobby::{Row, LOBBY_SOURCE},
        store::{ListView, Update},
        summary_text, Arranged,
    },
    query::{ListQuery, SortKey},
    services::browser,
    state::{Conn, State},
    views::table::{use_favourites_seen, use_rows_drawn, TableView},
};

/// What goes where the table goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Body {
    /// The table: rows or favourites to show.
    Table,
    /// No list yet: loading, or unreachable while the connection waits.
    BeforeList(Conn),
    /// The list is empty.
    NoServers,
    /// The filters hide every server.
    NoMatch,
}

/// The lobby's list, ready to draw.
pub struct LobbyView {
    /// The rows and what the last update changed in them.
    pub shown: ListView,
    /// The rows to show, in order, with the marks' counts.
    pub arranged: Rc<Arranged>,
    /// The query's page of them, with the favourites not in the list.
    pub table: TableView,
    /// Keys of the rows on this page that appeared a moment ago.
    pub new_keys: Rc<Vec<Rc<str>>>,
    pub body: Body,
    /// "N servers · N players · N open"; empty before the first list.
    pub summary: String,
    /// Whether a list arrived (the summary and the filter note show).
    pub has_list: bool,
    /// When the list arrived (wall clock), for "updated N s ago".
    pub at_ms: Option<f64>,
    /// Why the list may be out of date, if it may.
    pub stale: Option<&'static str>,
    /// The bridge's last refusal.
    pub error: Option<String>,
}

/// The lobby's list under `query`; `on_sort` goes to the headings.
#[hook]
pub fn use_lobby_view(query: &ListQuery, on_sort: Callback<SortKey>) -> LobbyView {
    let lobby = use_lobby();
    let state = &*lobby.state;
    let settings = use_settings();
    let shown = state.list.shown().clone();
    let version = shown.version();
    // The view without its page: paging does not arrange again.
    let filter_key = ListQuery {
        page: 0,
        ..query.clone()
    };
    let arranged = use_arranged(&shown, &filter_key, &settings);
    let fresh = use_fresh(&shown);
    use_favourites_seen(
        (version, settings.marks.version),
        arranged.present.clone(),
        state.received_at_ms,
        settings.on_mark(),
    );
    let has_list = state.received_at_ms.is_some();
    // Favourites not in the list: greyed on the first page until removed.
    let mut table = TableView::new(
        &arranged,
        query,
        on_sort,
        &settings.marks,
        settings.on_mark(),
        (LOBBY_SOURCE, has_list),
    );
    table.drawn = use_rows_drawn(table.len());
    let now = browser::now_ms();
    let (new_keys, no_rows) = {
        let rows = shown.rows();
        let fresh = fresh.borrow();
        let new_keys: Vec<Rc<str>> = table
            .shown
            .iter()
            .filter_map(|&i| rows.get(i))
            .filter(|r| fresh.is_new(&r.key, now))
            .map(|r| r.key.clone())
            .collect();
        (new_keys, rows.is_empty())
    };
    let body = if !table.is_empty() {
        Body::Table
    } else if !has_list {
        Body::BeforeList(state.conn)
    } else if no_rows {
        Body::NoServers
    } else {
        Body::NoMatch
    };
    LobbyView {
        summary: if has_list {
            summary_text::<Row>(shown.summary())
        } else {
            String::new()
        },
        arranged,
        table,
        new_keys: Rc::new(new_keys),
        body,
        has_list,
        at_ms: state.received_at_ms,
        stale: has_list.then(|| stale_text(state)).flatten(),
        error: state.last_error.clone(),
        shown,
    }
}

/// Why the lobby's list shown may be out of date, if it may.
fn stale_text(state: &State) -> Option<&'static str> {
    if state.disconnected() {
        Some(t(K::StaleLobby))
    } else if state.master == Some(MasterState::Down) {
        Some(t(K::StaleMaster))
    } else {
        None
    }
}

/// The rows arranged under `query` and the settings' marks. The last
/// arrangement is kept: the same version of the rows, query and marks give
/// it again, and after a delta only the rows it changed are re-placed (see
/// [`arrange_after`], which is this hook's memo). Kept here, not in the
/// list's store: it follows this view's query and marks as much as the
/// list; and not a `use_memo`, which keeps no arrangement from the version
/// before and would arrange the whole list again on every delta.
#[hook]
fn use_arranged(shown: &ListView, query: &ListQuery, settings: &SettingsHandle) -> Rc<Arranged> {
    let last = use_mut_ref(|| None::<LastArranged>);
    let mut last = last.borrow_mut();
    let since = match shown.update() {
        Update::Rows { from, changes } => Some((*from, changes)),
        Update::All => None,
    };
    arrange_after(
        &mut last,
        (&shown.rows(), shown.version()),
        since,
        query,
        &settings.marks,
        LOBBY_SOURCE,
    )
}

/// Which rows are new since the first list ("new" for a few seconds); each
/// list version is noted once ([`Fresh::observe`] ignores one it saw), and
/// after the first only its changed rows are looked at. Kept here, not in
/// the list's store: the first list is the first this view shows (a lobby
/// opened after the server's page marks none new); and not a `use_memo`,
/// which keeps no keys from the version before.
#[hook]
fn use_fresh(shown: &ListView) -> Rc<RefCell<Fresh>> {
    let fresh = use_mut_ref(Fresh::default);
    // Version 0 is no list at all: the first list is the first one seen,
    // whose rows are not new.
    if shown.version() > 0 {
        let rows = shown.rows();
        let key_of = |id: &u64| {
            let i = rows.binary_search_by_key(id, |r| r.id).ok()?;
            Some(&rows[i].key)
        };
        fresh.borrow_mut().observe(
            (shown.version(), rows.len()),
            browser::now_ms(),
            rows.iter().map(|r| &r.key),
            shown.changed().iter().filter_map(key_of),
        );
    }
    fresh
}
