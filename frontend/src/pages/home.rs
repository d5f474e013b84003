//! `/`: the live server list.

use yew::prelude::*;

use crate::i18n::{t, K};

use crate::components::{header::Header, server_browser::ServerBrowser};

#[component]
pub fn Home() -> Html {
    html! {
        <>
            <Header />
            <main class="page">
                <h1>{ t(K::GameServers) }</h1>
                <ServerBrowser />
            </main>
        </>
    }
}
