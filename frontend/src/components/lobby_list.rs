//! The lobby's own servers: filters, summary, table, empty states and
//! paging for the master's list.

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{
        browser_chrome::{empty_before_list, list_meta, no_match, stale_text, ViewCallbacks},
        empty_state::EmptyState,
        filters::Filters,
        pager::Pager,
        server_table::ServerTable,
    },
    context::use_lobby,
    listing::{page_count, page_slice, summarize, summary_text, visible},
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
    // when the page does.
    let filter_key = ListQuery {
        page: 0,
        ..query.clone()
    };
    let all = use_memo((state.version, filter_key), |(_, q)| {
        visible(&state.rows, q)
    });
    let summary = use_memo(state.version, |_| summarize(&state.rows));
    let (page, slice) = page_slice(&all, query.page);
    let shown = Rc::new(slice.to_vec());
    let pages = page_count(all.len());

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

    let ViewCallbacks {
        on_sort,
        on_page,
        clear_filters,
    } = ViewCallbacks::new(&query, &set_query);

    let has_list = state.received_at_ms.is_some();
    let body = if !all.is_empty() {
        html! {
            <ServerTable rows={state.rows.clone()} shown={shown} query={query.clone()}
                version={state.version} on_sort={on_sort} />
        }
    } else if !has_list {
        empty_before_list(state.conn)
    } else if state.rows.is_empty() {
        html! {
            <EmptyState title="No servers online"
                detail="Nobody is hosting a game right now. This list updates by itself when a server starts." />
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
                if has_list { summary_text(*summary, all.len()) } else { String::new() },
                state.received_at_ms,
                has_list.then(|| stale_text(state)).flatten(),
                state.last_error.as_deref(),
            ) }
            <div class="table-wrap">{ body }</div>
            <Pager page={page} pages={pages} on_page={on_page} />
        </>
    }
}
