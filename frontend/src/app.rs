//! The router: `/` list, `/admin`, `/embed`; one lobby connection and the
//! tab's test servers for all of them.

use yew::prelude::*;

use crate::{
    contexts::lobby::LobbyProvider,
    contexts::settings::SettingsProvider,
    pages::{admin::Admin, embed::Embed, home::Home, not_found::NotFound},
    route::Route,
    router::{use_router, RouterProvider},
    test_servers::provider::TestServersProvider,
};

fn switch(route: Route) -> Html {
    match route {
        Route::Home => html! { <Home /> },
        Route::Admin => html! { <Admin /> },
        Route::Embed => html! { <Embed /> },
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
                        <Pages />
                    </SettingsProvider>
                </TestServersProvider>
            </LobbyProvider>
        </RouterProvider>
    }
}
