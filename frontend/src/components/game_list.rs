//! One source of other games' servers: filters, summary, table or one
//! server's details, empty states and paging, drawn from its view model
//! (`views::games`).

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{
        browser_chrome::{
            empty_before_list, filter_note, list_meta, no_match, scroll_to_top, ViewCallbacks,
        },
        empty_state::EmptyState,
        filters::Filters,
        game_detail::GameDetail,
        game_table::GameTable,
        pager::Pager,
    },
    contexts::settings::use_settings,
    i18n::{t, tf, K},
    query::ListQuery,
    views::games::use_game_view,
};

/// Props of [`GameList`].
#[derive(Properties, PartialEq)]
pub struct GameListProps {
    /// Its `source` names the source shown.
    pub query: ListQuery,
    pub on_change: Callback<ListQuery>,
    /// Compact mode for the iframe: no filter bar.
    #[prop_or_default]
    pub embed: bool,
}

/// The selected source's servers as `query` says; with `server=` set, that
/// server's details instead of the table.
#[component]
pub fn GameList(props: &GameListProps) -> Html {
    let q = props.query.clone();
    let set = props.on_change.clone();
    let ViewCallbacks {
        on_sort,
        on_page,
        clear_filters,
    } = ViewCallbacks::new(&q, &set);
    let view = use_game_view(&q, on_sort);
    let settings = use_settings();

    let back_to_lobby = {
        let next = q.with_source(None);
        let set = set.clone();
        Callback::from(move |_: MouseEvent| set.emit(next.clone()))
    };
    let Some(source) = view.source else {
        // Before the bridge's first report, or a link to a source this
        // bridge does not have.
        let body = if !view.reported {
            empty_before_list(view.conn)
        } else {
            html! {
                <EmptyState title={t(K::NotOnBridge)}
                    detail={t(K::NotOnBridgeDetail)}
                    action={Some(("back-to-lobby".into(), t(K::ShowLobby).into(), back_to_lobby))} />
            }
        };
        return html! { <div class="table-wrap">{ body }</div> };
    };

    let meta = list_meta(
        source.summary,
        filter_note(
            &source.arranged,
            clear_filters.clone(),
            &settings.on_mark(),
            settings.marks.show_hidden,
        ),
        view.at_ms,
        view.stale,
        None,
    );
    let source_error = source.error.as_ref().map(|e| {
        html! {
            <p class="banner warn" role="alert" data-testid="source-error">
                { tf(K::SourceError, &[e]) }
            </p>
        }
    });
    // Not a failure: the servers that are listed are fine.
    let source_note = source.note.as_ref().map(|n| {
        html! { <p class="banner info" data-testid="source-note">{ n.clone() }</p> }
    });

    if let Some(selected) = source.selected {
        let close = {
            let next = q.with_server(None);
            let set = set.clone();
            Callback::from(move |()| set.emit(next.clone()))
        };
        let body = match selected {
            Some(row) => {
                html! { <GameDetail {row} kind={source.kind} on_close={close} /> }
            }
            None => html! {
                <div class="table-wrap">
                    <EmptyState title={t(K::NoLongerListed)}
                        detail={t(K::NoLongerListedDetail)}
                        action={Some(("detail-close".into(), t(K::ShowAllServers).into(), close.reform(|_: MouseEvent| ())))} />
                </div>
            },
        };
        return html! { <>{ meta }{ source_error }{ source_note }{ body }</> };
    }

    let on_open = {
        let q = q.clone();
        let set = set.clone();
        Callback::from(move |key: Rc<str>| {
            set.emit(q.with_server(Some(key.to_string())));
            scroll_to_top();
        })
    };
    let view = source.table;
    let rows = source.rows;
    let (page, pages) = (view.page, view.pages);
    let body = if !view.is_empty() {
        html! { <GameTable rows={rows.clone()} {view} {on_open} /> }
    } else if rows.is_empty() {
        html! {
            <EmptyState title={t(K::NoServersListed)}
                detail={t(K::NoServersListedDetail)} />
        }
    } else {
        no_match(clear_filters)
    };
    html! {
        <>
            if !props.embed {
                <Filters query={q.clone()} on_change={set.clone()} />
            }
            { meta }
            { source_error }
            { source_note }
            <div class="table-wrap">{ body }</div>
            <Pager {page} {pages} {on_page} />
        </>
    }
}
