//! The whole list view shared by `/` and `/embed`: a tab per source (the
//! lobby's own servers, then each source of other games' servers the bridge
//! queries) and the selected list, with the view state kept in the URL
//! query.

use yew::prelude::*;
use yew_router::prelude::*;

use crate::{
    app::Route,
    components::{game_list::GameList, lobby_list::LobbyList, source_tabs::SourceTabs},
    context::use_lobby,
    i18n::{t, K},
    query::ListQuery,
    services::storage,
};

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
    let raw_query = location
        .as_ref()
        .map_or(String::new(), |l| l.query_str().to_owned());
    let query = ListQuery::from_query_str(&raw_query);
    let embed = props.embed;

    // A bare `/` gets the last used filters (the summary says what they
    // hide, one click clears them). Embeds show what their link says.
    {
        let navigator = navigator.clone();
        let route = route.clone();
        let bare = raw_query.trim_start_matches('?').is_empty();
        use_effect_with((), move |_| {
            if bare && !embed {
                if let (Some(saved), Some(nav)) = (storage::filters(), &navigator) {
                    let pairs = saved.to_pairs();
                    if !pairs.is_empty() {
                        let _ = nav.replace_with_query(&route, &pairs);
                    }
                }
            }
        });
    }

    let set_query = Callback::from(move |q: ListQuery| {
        if !embed {
            storage::set_filters(&q);
        }
        if let Some(nav) = &navigator {
            let pairs = q.to_pairs();
            if pairs.is_empty() {
                nav.replace(&route);
            } else {
                let _ = nav.replace_with_query(&route, &pairs);
            }
        }
    });

    let sources = state
        .games
        .as_ref()
        .filter(|g| !g.sources.is_empty() && !query.hide_tabs);
    html! {
        <section class={classes!("browser", props.embed.then_some("embed"))} aria-label={t(K::ServersNav)}>
            if let Some(games) = sources {
                <SourceTabs games={games.clone()} lobby_count={state.rows.len()}
                    query={query.clone()} on_change={set_query.clone()} />
            }
            <div id="source-panel" role={sources.is_some().then_some("tabpanel")}>
                if query.source.is_some() {
                    <GameList query={query} on_change={set_query} embed={props.embed} />
                } else {
                    <LobbyList query={query} on_change={set_query} embed={props.embed} />
                }
            </div>
        </section>
    }
}
