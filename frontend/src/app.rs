//! The router: `/` list, `/admin`, `/embed`, `/server/{key}` and
//! `/embed/server/{key}`; one lobby connection for all of them.
//!
//! Two roots, one per bundle. The player's ([`App`]) carries every page but
//! `/admin`: arriving there inside the app, it has the browser load the
//! path, which the bridge answers with the admin's bundle. The admin's
//! ([`AdminApp`]) carries every page and the tab's test servers, so moving
//! between pages inside it keeps them registered.

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

/// Every page but `/admin`, which each root draws its own way.
fn switch(route: Route) -> Html {
    match route {
        Route::Home => html! { <Home /> },
        Route::Embed => html! { <Embed /> },
        // Keyed by the server, so another server's page starts afresh.
        Route::Server(k) => html! { <ServerPage key={k.to_string()} server={k} /> },
        Route::EmbedServer(k) => html! { <EmbedServer key={k.to_string()} server={k} /> },
        Route::Admin | Route::NotFound => html! { <NotFound /> },
    }
}

/// The player's pages: `/admin` is another bundle, loaded by the browser.
#[component]
fn Pages() -> Html {
    let route = use_router().location.route();
    // Where this document was loaded (or the language last changed, which
    // mounts the pages again). Loaded at `/admin`, the server answered that
    // path with this bundle, not the admin's: loading it again would loop.
    let loaded_at = use_state(|| route);
    match route {
        Route::Admin if *loaded_at != Route::Admin => html! { <LoadAdmin /> },
        route => switch(route),
    }
}

/// Has the browser load `/admin` (the location already says it).
#[component]
fn LoadAdmin() -> Html {
    use_effect_with((), |_| {
        if let Some(window) = web_sys::window() {
            let _ = window.location().reload();
        }
    });
    html! {}
}

/// The admin's pages: all of them.
#[component]
fn AdminPages() -> Html {
    match use_router().location.route() {
        Route::Admin => html! { <Admin /> },
        route => switch(route),
    }
}

/// The player's root component (`index.html`).
#[component]
pub fn App() -> Html {
    html! {
        <RouterProvider>
            <LobbyProvider>
                <SettingsProvider>
                    <NotifyProvider>
                        <Pages />
                    </NotifyProvider>
                </SettingsProvider>
            </LobbyProvider>
        </RouterProvider>
    }
}

/// The admin's root component (`admin/index.html`): the same providers
/// and the test servers', above the settings' (which re-mount what is
/// under them when the language changes), so the servers outlive each page.
#[component]
pub fn AdminApp() -> Html {
    html! {
        <RouterProvider>
            <LobbyProvider>
                <TestServersProvider>
                    <SettingsProvider>
                        <NotifyProvider>
                            <AdminPages />
                        </NotifyProvider>
                    </SettingsProvider>
                </TestServersProvider>
            </LobbyProvider>
        </RouterProvider>
    }
}
