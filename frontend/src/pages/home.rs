//! `/`: the live server list, and the lobby's totals of the last day under it.

use yew::prelude::*;

use crate::i18n::{t, K};

use crate::{
    components::{header::Header, lobby_totals::LobbyTotals, server_browser::ServerBrowser},
    services::browser,
};

#[component]
pub fn Home() -> Html {
    html! {
        <>
            <Header />
            <main class="page">
                <h1>{ t(K::GameServers) }</h1>
                <ServerBrowser />
                // The totals are this bridge's: not under another's list.
                if browser::bridge_is_own() {
                    <LobbyTotals />
                }
            </main>
        </>
    }
}
