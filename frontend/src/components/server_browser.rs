//! The whole list view shared by `/` and `/embed`: filters, summary, table,
//! empty states and paging, with the view state kept in the URL query.

use std::rc::Rc;

use yew::prelude::*;
use yew_router::prelude::*;

use crate::{
    app::Route,
    components::{
        filters::Filters, pager::Pager, server_table::ServerTable, updated_ago::UpdatedAgo,
    },
    context::use_lobby,
    listing::{page_count, page_slice, summarize, summary_text, visible},
    query::{ListQuery, SortKey},
    services::browser,
    state::Conn,
};
use protocol::bridge::MasterState;

/// Props of [`ServerBrowser`].
#[derive(Properties, PartialEq)]
pub struct ServerBrowserProps {
    /// Compact mode for the iframe: no filter bar.
    #[prop_or_default]
    pub embed: bool,
}

/// Reads the view from the URL and writes changes back with
/// `history.replaceState`, so links and reloads reproduce it.
#[component]
pub fn ServerBrowser(props: &ServerBrowserProps) -> Html {
    let lobby = use_lobby();
    let state = &*lobby.state;
    let location = use_location();
    let navigator = use_navigator();
    let route = use_route::<Route>().unwrap_or(Route::Home);
    let query = ListQuery::from_query_str(location.as_ref().map_or("", |l| l.query_str()));

    let set_query = {
        let navigator = navigator.clone();
        let route = route.clone();
        Callback::from(move |q: ListQuery| {
            if let Some(nav) = &navigator {
                let pairs = q.to_pairs();
                if pairs.is_empty() {
                    nav.replace(&route);
                } else {
                    let _ = nav.replace_with_query(&route, &pairs);
                }
            }
        })
    };

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
        let size = state.rows.len();
        let perf = state.received_perf_ms;
        use_effect_with(state.version, move |v| {
            if *v > 0 {
                browser::record_render(size, perf);
            }
        });
    }

    let on_sort = {
        let q = query.clone();
        let set = set_query.clone();
        Callback::from(move |key: SortKey| set.emit(q.with_sort(key)))
    };
    let on_page = {
        let q = query.clone();
        let set = set_query.clone();
        Callback::from(move |p: usize| {
            set.emit(ListQuery {
                page: p,
                ..q.clone()
            });
            if let Some(w) = web_sys::window() {
                w.scroll_to_with_x_and_y(0.0, 0.0);
            }
        })
    };
    let clear_filters = {
        let q = query.clone();
        let set = set_query.clone();
        Callback::from(move |_: MouseEvent| {
            set.emit(ListQuery {
                sort: q.sort,
                dir: q.dir,
                theme: q.theme,
                bridge: q.bridge.clone(),
                ..Default::default()
            })
        })
    };

    let has_list = state.received_at_ms.is_some();
    let body = if !all.is_empty() {
        html! {
            <ServerTable rows={state.rows.clone()} shown={shown} query={query.clone()}
                version={state.version} on_sort={on_sort} />
        }
    } else {
        let (title, detail, clear) = if !has_list {
            match state.conn {
                Conn::Waiting { .. } => (
                    "Can't reach the lobby right now",
                    "The page keeps trying by itself; the list appears as soon as the connection is back.",
                    false,
                ),
                _ => ("Loading servers…", "Connecting to the lobby.", false),
            }
        } else if state.rows.is_empty() {
            (
                "No servers online",
                "Nobody is hosting a game right now. This list updates by itself when a server starts.",
                false,
            )
        } else {
            (
                "No servers match",
                "Every server is hidden by the search or the filters.",
                true,
            )
        };
        html! {
            <div class="empty" data-testid="empty">
                <p class="empty-title">{ title }</p>
                <p class="muted">{ detail }</p>
                if clear {
                    <button type="button" id="clear-filters" onclick={clear_filters}>{"Clear search and filters"}</button>
                }
            </div>
        }
    };

    let stale = if !has_list {
        None
    } else if matches!(state.conn, Conn::Waiting { .. }) {
        Some("The connection to the lobby was lost; this is the last list received. Reconnecting by itself.")
    } else if state.master == Some(MasterState::Down) {
        Some("The master server is unreachable; this is the last list it sent.")
    } else {
        None
    };
    html! {
        <section class={classes!("browser", props.embed.then_some("embed"))} aria-label="Servers">
            if !props.embed {
                <Filters query={query.clone()} on_change={set_query.clone()} />
            }
            <div class="meta">
                <span data-testid="summary" class="summary">
                    { if has_list { summary_text(*summary, all.len()) } else { String::new() } }
                </span>
                <UpdatedAgo at_ms={state.received_at_ms} />
            </div>
            if let Some(text) = stale {
                <p class="banner warn" role="alert" data-testid="stale">{ text }</p>
            }
            if let Some(err) = &state.last_error {
                <p class="banner" role="status">{ format!("The bridge says: {err}") }</p>
            }
            <div class="table-wrap">{ body }</div>
            <Pager page={page} pages={pages} on_page={on_page} />
        </section>
    }
}
