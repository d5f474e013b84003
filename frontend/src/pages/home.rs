//! `/`: the live server list.

use yew::prelude::*;

use crate::components::{header::Header, server_browser::ServerBrowser};

#[component]
pub fn Home() -> Html {
    html! {
        <>
            <Header />
            <main class="page">
                <h1>{"Game servers"}</h1>
                <ServerBrowser />
            </main>
        </>
    }
}
