//! Any other path.

use yew::prelude::*;
use yew_router::prelude::*;

use crate::{app::Route, components::header::Header};

#[component]
pub fn NotFound() -> Html {
    html! {
        <>
            <Header />
            <main class="page">
                <h1>{"Page not found"}</h1>
                <p><Link<Route> to={Route::Home}>{"Back to the server list"}</Link<Route>></p>
            </main>
        </>
    }
}
