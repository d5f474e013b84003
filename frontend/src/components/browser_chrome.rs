//! What the lobby's list and other games' lists show around their tables:
//! the summary line, warnings about stale data, the empty state before the
//! first data arrives.

use yew::prelude::*;

use crate::{
    components::{empty_state::EmptyState, updated_ago::UpdatedAgo},
    favourites::MarkAction,
    i18n::{t, tf, K},
    list::Arranged,
    query::{ListQuery, SortKey},
    state::Conn,
};

/// Summary, age and banners above a table. A plain function rather than
/// a component, so the summary changes in the same render as the rows (a
/// child component would render a moment later).
pub fn list_meta(
    summary: String,
    note: Html,
    at_ms: Option<f64>,
    stale: Option<&'static str>,
    error: Option<&str>,
) -> Html {
    html! {
        <>
            <div class="meta">
                <span class="summary-line">
                    <span data-testid="summary" class="summary">{ summary }</span>
                    { note }
                </span>
                <UpdatedAgo {at_ms} />
            </div>
            if let Some(text) = stale {
                <p class="banner warn" role="alert" data-testid="stale">{ text }</p>
            }
            if let Some(err) = error {
                <p class="banner" role="status">{ tf(K::BridgeSays, &[&err]) }</p>
            }
        </>
    }
}

/// What the filters and hidden rows take away, beside the summary:
/// "· filters hide 3 · clear" and "· 2 hidden · show", each one click
/// (the latter's to `on_mark`).
pub fn filter_note(
    arranged: &Arranged,
    clear_filters: Callback<MouseEvent>,
    on_mark: &Callback<MarkAction>,
    show_hidden: bool,
) -> Html {
    let filtered = (arranged.filtered_out > 0).then(|| {
        html! {
            <span class="note" data-testid="filtered">
                { " · " }{ tf(K::FiltersHide, &[&arranged.filtered_out]) }{ " " }
                <button type="button" class="link" id="summary-clear" onclick={clear_filters}>
                    { t(K::ClearFilters) }
                </button>
            </span>
        }
    });
    let hidden = (arranged.hidden > 0).then(|| {
        let on_mark = on_mark.clone();
        let onclick = Callback::from(move |_: MouseEvent| on_mark.emit(MarkAction::ShowHidden(!show_hidden)));
        html! {
            <span class="note" data-testid="hidden">
                { " · " }{ tf(K::HiddenCount, &[&arranged.hidden]) }{ " " }
                <button type="button" class="link" id="toggle-hidden" aria-pressed={show_hidden.to_string()} {onclick}>
                    { t(if show_hidden { K::HideHidden } else { K::ShowHidden }) }
                </button>
            </span>
        }
    });
    html! { <>{ filtered }{ hidden }</> }
}

/// The empty state before any data arrived: loading, or unreachable while
/// the connection waits to retry.
pub fn empty_before_list(conn: Conn) -> Html {
    match conn {
        Conn::Waiting { .. } => html! {
            <EmptyState title={t(K::CantReach)}
                detail={t(K::CantReachDetail)} />
        },
        _ => html! { <EmptyState title={t(K::LoadingServers)} detail={t(K::ConnectingLobby)} /> },
    }
}

/// The empty state when the search or filters hide every server, with a
/// button that clears them.
pub fn no_match(clear_filters: Callback<MouseEvent>) -> Html {
    html! {
        <EmptyState title={t(K::NoMatch)}
            detail={t(K::NoMatchDetail)}
            action={Some(("clear-filters".into(), t(K::ClearSearchFilters).into(), clear_filters))} />
    }
}

/// What both lists do when a heading, a page button or "clear filters" is
/// clicked: a new view for the URL.
pub struct ViewCallbacks {
    pub on_sort: Callback<SortKey>,
    pub on_page: Callback<usize>,
    pub clear_filters: Callback<MouseEvent>,
}

impl ViewCallbacks {
    /// Callbacks that emit `query`'s successors to `set`.
    pub fn new(query: &ListQuery, set: &Callback<ListQuery>) -> Self {
        let on_sort = {
            let (q, set) = (query.clone(), set.clone());
            Callback::from(move |key: SortKey| set.emit(q.with_sort(key)))
        };
        let on_page = {
            let (q, set) = (query.clone(), set.clone());
            Callback::from(move |page: usize| {
                set.emit(ListQuery { page, ..q.clone() });
                scroll_to_top();
            })
        };
        let clear_filters = {
            let (next, set) = (query.cleared(), set.clone());
            Callback::from(move |_: MouseEvent| set.emit(next.clone()))
        };
        ViewCallbacks {
            on_sort,
            on_page,
            clear_filters,
        }
    }
}

/// Back to the top after changing pages, so the new page starts at its
/// first row.
pub fn scroll_to_top() {
    if let Some(w) = web_sys::window() {
        w.scroll_to_with_x_and_y(0.0, 0.0);
    }
}
