//! `/embed`: the list without navigation, for an `<iframe>`; `theme=light|dark`
//! overrides the system colour scheme. Its heading is for screen readers
//! only: an iframe's page has no room for a title.

use yew::prelude::*;

use crate::{
    components::{server_browser::ServerBrowser, status_pill::StatusPill},
    i18n::{t, K},
    query::ListQuery,
    router::use_router,
    services::browser,
};

#[component]
pub fn Embed() -> Html {
    let router = use_router();
    let query = ListQuery::from_query_str(&router.location.query);
    let theme = query.theme.map(|t| t.as_str());
    use_effect_with(theme, |theme| {
        browser::set_theme(*theme);
        || browser::set_theme(None)
    });
    html! {
        <main class="page embed">
            // The page's title for screen readers; the embed shows only the brand.
            <h1 class="visually-hidden">{ t(K::GameServers) }</h1>
            <div class="embed-head">
                <span class="brand"><span class="brand-mark" aria-hidden="true">{"◆"}</span>{" Lobby"}</span>
                <StatusPill />
            </div>
            <ServerBrowser embed=true />
        </main>
    }
}
