//! The router: `/` list, `/admin`, `/embed`; one lobby connection and the
//! tab's test servers for all of them.

use yew::prelude::*;

pub use crate::router::Route;

use crate::{
    context::LobbyProvider,
    marks_context::MarksProvider,
    pages::{admin::Admin, embed::Embed, home::Home, not_found::NotFound},
    router::{use_router, RouterProvider},
    test_server_context::TestServersProvider,
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
                    <MarksProvider>
                        <Pages />
                    </MarksProvider>
                </TestServersProvider>
            </LobbyProvider>
        </RouterProvider>
    }
}
