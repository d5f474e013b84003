//! The lobby's own servers: filters, summary, table, empty states and
//! paging for the master's list.

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{
        browser_chrome::{
            empty_before_list, filter_note, list_meta, no_match, stale_text, ViewCallbacks,
        },
        empty_state::EmptyState,
        filters::Filters,
        list_table::{use_favourites_seen, TableView},
        pager::Pager,
        server_table::ServerTable,
    },
    contexts::lobby::use_lobby,
    contexts::settings::use_settings,
    fresh::Fresh,
    i18n::{t, K},
    keyed_rows::diff,
    list::{incremental::arrange_after, summarize, summary_text},
    listing::{Row, LOBBY_SOURCE},
    query::ListQuery,
    services::browser,
};

/// Props of [`LobbyList`].
#[derive(Properties, PartialEq)]
pub struct LobbyListProps {
    pub query: ListQuery,
    /// Receives the new view (written to the URL by the parent).
    pub on_change: Callback<ListQuery>,
    /// Compact mode for the iframe: no filter bar.
    #[prop_or_default]
    pub embed: bool,
}

/// The master's list, filtered, sorted and paged as `query` says.
#[component]
pub fn LobbyList(props: &LobbyListProps) -> Html {
    let lobby = use_lobby();
    let state = &*lobby.state;
    let query = props.query.clone();
    let set_query = props.on_change.clone();

    // Filtering and sorting only when the list or the view changes, not
    // when the page does; after a delta, only the rows it changed move.
    let filter_key = ListQuery {
        page: 0,
        ..query.clone()
    };
    let settings = use_settings();
    let last = use_mut_ref(|| None);
    let arranged = arrange_after(
        &mut last.borrow_mut(),
        &state.rows,
        &filter_key,
        &settings.marks,
        LOBBY_SOURCE,
        &diff,
    );
    let summary = use_memo(state.version, |_| summarize(&state.rows));
    let ViewCallbacks {
        on_sort,
        on_page,
        clear_filters,
    } = ViewCallbacks::new(&query, &set_query);
    let has_list = state.received_at_ms.is_some();
    // Favourites not in the list: greyed on the first page until removed.
    let view = TableView::new(
        &arranged,
        &query,
        on_sort,
        &settings.marks,
        settings.dispatcher(),
        (LOBBY_SOURCE, has_list),
    );
    // Rows new since the page opened ("new" for a few seconds).
    let fresh = use_mut_ref(Fresh::default);
    fresh.borrow_mut().observe(
        state.version,
        browser::now_ms(),
        state
            .rows
            .iter()
            .map(|r| (&r.key, r.changed_in == state.version)),
    );
    use_favourites_seen(
        (state.version, settings.marks.version),
        arranged.present.clone(),
        state.received_at_ms,
        settings.dispatcher(),
    );
    let now = browser::now_ms();
    let new_keys: Rc<Vec<Rc<str>>> = Rc::new(
        view.shown
            .iter()
            .filter_map(|&i| state.rows.get(i))
            .filter(|r| fresh.borrow().is_new(&r.key, now))
            .map(|r| r.key.clone())
            .collect(),
    );
    {
        let timing = browser::RenderTiming {
            list_size: state.rows.len(),
            received_perf_ms: state.received_perf_ms,
            parse_ms: state.parse_ms,
            kind: state.update_kind,
        };
        use_effect_with(state.version, move |v| {
            if *v > 0 {
                browser::record_render(timing);
            }
        });
    }

    let note = filter_note(
        &arranged,
        clear_filters.clone(),
        &settings.dispatcher(),
        settings.marks.show_hidden,
    );
    let (page, pages) = (view.page, view.pages);
    let body = if !view.is_empty() {
        html! {
            <ServerTable rows={state.rows.clone()} {view} version={state.version} {new_keys} />
        }
    } else if !has_list {
        empty_before_list(state.conn)
    } else if state.rows.is_empty() {
        html! {
            <EmptyState title={t(K::NoServersOnline)}
                detail={t(K::NoServersOnlineDetail)} />
        }
    } else {
        no_match(clear_filters)
    };
    html! {
        <>
            if !props.embed {
                <Filters query={query.clone()} on_change={set_query.clone()} />
            }
            { list_meta(
                if has_list { summary_text::<Row>(*summary) } else { String::new() },
                if has_list { note } else { html! {} },
                state.received_at_ms,
                has_list.then(|| stale_text(state)).flatten(),
                state.last_error.as_deref(),
            ) }
            <div class="table-wrap">{ body }</div>
            <Pager page={page} pages={pages} on_page={on_page} />
        </>
    }
}
