//! `/`: the live server list, and the lobby's totals of the last day under it.

use yew::prelude::*;

use crate::i18n::{t, K};

use crate::{
    components::{header::Header, lobby_totals::LobbyTotals, server_browser::ServerBrowser},
    contexts::lobby::use_lobby,
    services::browser,
};

#[component]
pub fn Home() -> Html {
    // The totals wait for the list, drawn whole: drawn before it, they
    // would be pushed down as its rows arrive (and their work would delay
    // them).
    let listed = use_lobby().state.list.version() > 0;
    let drawn = use_state_eq(|| false);
    let on_drawn = {
        let drawn = drawn.clone();
        use_callback((), move |(), _| drawn.set(true))
    };
    html! {
        <>
            <Header />
            <main class="page">
                <h1>{ t(K::GameServers) }</h1>
                <ServerBrowser {on_drawn} />
                // The totals are this bridge's: not under another's list.
                if listed && *drawn && browser::bridge_is_own() {
                    <LobbyTotals />
                }
            </main>
        </>
    }
}
