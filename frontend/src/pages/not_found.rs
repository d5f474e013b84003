//! Any other path.

use yew::prelude::*;
use yew_router::prelude::*;

use crate::{
    app::Route,
    components::header::Header,
    i18n::{t, K},
};

#[component]
pub fn NotFound() -> Html {
    html! {
        <>
            <Header />
            <main class="page">
                <h1>{ t(K::PageNotFound) }</h1>
                <p><Link<Route> to={Route::Home}>{ t(K::BackToList) }</Link<Route>></p>
            </main>
        </>
    }
}
