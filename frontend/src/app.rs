//! The router: `/` list, `/admin`, `/embed`; one lobby connection and the
//! tab's test servers for all of them.

use yew::prelude::*;
use yew_router::prelude::*;

use crate::{
    context::LobbyProvider,
    marks_context::MarksProvider,
    pages::{admin::Admin, embed::Embed, home::Home, not_found::NotFound},
    test_server_context::TestServersProvider,
};

/// The app's routes.
#[derive(Debug, Clone, PartialEq, Eq, Routable)]
pub enum Route {
    #[at("/")]
    Home,
    #[at("/admin")]
    Admin,
    #[at("/embed")]
    Embed,
    #[not_found]
    #[at("/404")]
    NotFound,
}

fn switch(route: Route) -> Html {
    match route {
        Route::Home => html! { <Home /> },
        Route::Admin => html! { <Admin /> },
        Route::Embed => html! { <Embed /> },
        Route::NotFound => html! { <NotFound /> },
    }
}

/// The root component.
#[component]
pub fn App() -> Html {
    html! {
        <BrowserRouter>
            <LobbyProvider>
                <TestServersProvider>
                    <MarksProvider>
                        <Switch<Route> render={switch} />
                    </MarksProvider>
                </TestServersProvider>
            </LobbyProvider>
        </BrowserRouter>
    }
}
