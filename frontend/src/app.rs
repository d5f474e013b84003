//! The router: `/` list, `/admin`, `/embed`, `/server/{key}` and
//! `/embed/server/{key}`; one lobby connection and the tab's test servers
//! for all of them.

use yew::prelude::*;

use crate::{
    contexts::lobby::LobbyProvider,
    contexts::notify::NotifyProvider,
    contexts::settings::SettingsProvider,
    pages::{
        admin::Admin,
        embed::Embed,
        home::Home,
        not_found::NotFound,
        server::{EmbedServer, ServerPage},
    },
    route::Route,
    router::{use_router, RouterProvider},
    test_servers::provider::TestServersProvider,
};

fn switch(route: Route) -> Html {
    match route {
        Route::Home => html! { <Home /> },
        Route::Admin => html! { <Admin /> },
        Route::Embed => html! { <Embed /> },
        // Keyed by the server, so another server's page starts afresh.
        Route::Server(k) => html! { <ServerPage key={k.to_string()} server={k} /> },
        Route::EmbedServer(k) => html! { <EmbedServer key={k.to_string()} server={k} /> },
        Route::NotFound => html! { <NotFound /> },
    }
}

/// The page the router's location names.
#[component]
fn Pages() -> Html {
    switch(use_router().location.route())
}

/// The root component.
#[component]
pub fn App() -> Html {
    html! {
        <RouterProvider>
            <LobbyProvider>
                <TestServersProvider>
                    <SettingsProvider>
                        <NotifyProvider>
                            <Pages />
                        </NotifyProvider>
                    </SettingsProvider>
                </TestServersProvider>
            </LobbyProvider>
        </RouterProvider>
    }
}
