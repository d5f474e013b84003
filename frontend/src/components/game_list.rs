//! One source of other games' servers: filters, summary, table or one
//! server's details, empty states and paging.

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{
        browser_chrome::{
            disconnected, empty_before_list, filter_note, list_meta, no_match, scroll_to_top,
            ViewCallbacks,
        },
        empty_state::EmptyState,
        filters::Filters,
        game_detail::GameDetail,
        game_table::GameTable,
        list_table::{use_favourites_seen, TableView},
        pager::Pager,
    },
    contexts::lobby::use_lobby,
    contexts::settings::use_settings,
    games,
    i18n::{t, tf, K},
    list::{self, summarize, summary_text},
    query::ListQuery,
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
    let lobby = use_lobby();
    let state = &*lobby.state;
    let q = props.query.clone();
    let set = props.on_change.clone();
    let id = q.source.clone().unwrap_or_default();
    // Borrowed, not cloned: this renders on every lobby push too, and a
    // source may list hundreds of servers with their players and rules.
    let source = state
        .games
        .as_deref()
        .and_then(|g| games::find(&g.sources, &id));
    let rows = {
        let all = state.games.clone();
        use_memo((state.games_version, id.clone()), move |(_, id)| {
            all.as_deref()
                .and_then(|g| games::find(&g.sources, id))
                .map(games::rows)
                .unwrap_or_default()
        })
    };
    let filter_key = ListQuery {
        page: 0,
        server: None,
        ..q.clone()
    };
    let settings = use_settings();
    let arranged = {
        let rows = rows.clone();
        let m = settings.marks.clone();
        use_memo(
            (state.games_version, filter_key, settings.marks.version),
            move |(_, q, _)| {
                list::arrange_rows(&rows, q, &m, q.source.as_deref().unwrap_or_default())
            },
        )
    };
    use_favourites_seen(
        (state.games_version, settings.marks.version),
        arranged.present.clone(),
        state.games_at_ms,
        settings.dispatcher(),
    );

    let back_to_lobby = {
        let next = q.with_source(None);
        let set = set.clone();
        Callback::from(move |_: MouseEvent| set.emit(next.clone()))
    };
    let Some(source) = source else {
        // Before the bridge's first report, or a link to a source this
        // bridge does not have.
        let body = if state.games.is_none() {
            empty_before_list(state.conn)
        } else {
            html! {
                <EmptyState title={t(K::NotOnBridge)}
                    detail={t(K::NotOnBridgeDetail)}
                    action={Some(("back-to-lobby".into(), t(K::ShowLobby).into(), back_to_lobby))} />
            }
        };
        return html! { <div class="table-wrap">{ body }</div> };
    };

    let stale = disconnected(state).then_some(t(K::StaleGames));
    let meta = list_meta(
        summary_text::<games::GameRow>(summarize(&rows)),
        filter_note(
            &arranged,
            ViewCallbacks::new(&q, &set).clear_filters,
            &settings.dispatcher(),
            settings.marks.show_hidden,
        ),
        state.games_at_ms,
        stale,
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

    if let Some(key) = &q.server {
        let close = {
            let next = q.with_server(None);
            let set = set.clone();
            Callback::from(move |()| set.emit(next.clone()))
        };
        let body = match rows.iter().find(|r| &*r.key == key.as_str()) {
            Some(row) => {
                html! { <GameDetail row={row.clone()} kind={source.kind} on_close={close} /> }
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

    let ViewCallbacks {
        on_sort,
        on_page,
        clear_filters,
    } = ViewCallbacks::new(&q, &set);
    let on_open = {
        let q = q.clone();
        let set = set.clone();
        Callback::from(move |key: Rc<str>| {
            set.emit(q.with_server(Some(key.to_string())));
            scroll_to_top();
        })
    };
    let view = TableView::new(
        &arranged,
        &q,
        on_sort,
        &settings.marks,
        settings.dispatcher(),
        (&id, true),
    );
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
