//! The whole list view shared by `/` and `/embed`: a tab per source (the
//! lobby's own servers, then each source of other games' servers the bridge
//! queries) and the selected list, with the view state kept in the URL
//! query.

use yew::prelude::*;

use crate::{
    components::{game_list::GameList, lobby_list::LobbyList, source_tabs::SourceTabs},
    contexts::lobby::use_lobby,
    i18n::{t, K},
    query::ListQuery,
    router::use_router,
    services::storage,
};

/// Props of [`ServerBrowser`].
#[derive(Properties, PartialEq)]
pub struct ServerBrowserProps {
    /// Compact mode for the iframe: no filter bar.
    #[prop_or_default]
    pub embed: bool,
    /// Told once the list shown is drawn whole (at once on another game's
    /// tab): what goes under it waits for that, or it would be pushed down.
    #[prop_or_default]
    pub on_drawn: Callback<()>,
}

/// Reads the view from the URL and writes changes back with
/// `history.replaceState`, so links and reloads reproduce it.
#[component]
pub fn ServerBrowser(props: &ServerBrowserProps) -> Html {
    let lobby = use_lobby();
    let state = &*lobby.state;
    let router = use_router();
    let raw_query = router.location.query.clone();
    let query = ListQuery::from_query_str(&raw_query);
    let embed = props.embed;

    // A bare `/` gets the last used filters (the summary says what they
    // hide, one click clears them). Embeds show what their link says.
    {
        let router = router.clone();
        let bare = raw_query.is_empty();
        use_effect_with((), move |_| {
            if bare && !embed {
                if let Some(saved) = storage::filters() {
                    let query = saved.to_query_string();
                    if !query.is_empty() {
                        router.replace_query(&query);
                    }
                }
            }
        });
    }

    {
        let on_drawn = props.on_drawn.clone();
        use_effect_with(query.source.is_some(), move |&games| {
            if games {
                on_drawn.emit(());
            }
        });
    }

    let set_query = Callback::from(move |q: ListQuery| {
        if !embed {
            storage::set_filters(&q);
        }
        router.replace_query(&q.to_query_string());
    });

    let sources = state
        .games
        .as_ref()
        .filter(|g| !g.sources.is_empty() && !query.hide_tabs);
    html! {
        <section class={classes!("browser", props.embed.then_some("embed"))} aria-label={t(K::ServersNav)}>
            if let Some(games) = sources {
                <SourceTabs games={games.clone()} lobby_count={state.list.rows().len()}
                    query={query.clone()} on_change={set_query.clone()} />
            }
            <div id="source-panel" role={sources.is_some().then_some("tabpanel")}>
                if query.source.is_some() {
                    <GameList query={query} on_change={set_query} embed={props.embed} />
                } else {
                    <LobbyList query={query} on_change={set_query} embed={props.embed}
                        on_drawn={props.on_drawn.clone()} />
                }
            </div>
        </section>
    }
}
