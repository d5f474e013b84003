//! Any other path.

use yew::prelude::*;

use crate::{
    components::header::Header,
    i18n::{t, K},
    route::Route,
    router::{link, use_router},
};

#[component]
pub fn NotFound() -> Html {
    let router = use_router();
    html! {
        <>
            <Header />
            <main class="page">
                <h1>{ t(K::PageNotFound) }</h1>
                <p>{ link(&router, Route::Home, Classes::new(), html! { t(K::BackToList) }) }</p>
            </main>
        </>
    }
}
