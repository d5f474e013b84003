//! The admin token field and the bridge's verdict on it.

use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::{
    contexts::lobby::use_lobby,
    i18n::{t, K},
    services::{browser, storage},
    state::Auth,
};

/// Signs this tab in with `bridgeAuth`; the token lives in sessionStorage.
#[component]
pub fn AuthPanel() -> Html {
    let lobby = use_lobby();
    let token = use_state(|| storage::token().unwrap_or_default());
    let on_input = {
        let token = token.clone();
        Callback::from(move |e: InputEvent| {
            token.set(e.target_unchecked_into::<HtmlInputElement>().value())
        })
    };
    let on_submit = {
        let token = token.clone();
        let lobby = lobby.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            lobby.sign_in(token.trim());
        })
    };
    if !browser::bridge_is_own() {
        return html! {
            <p data-testid="auth-result" class="auth-result muted" role="status">
                { t(K::SignInOnOwnBridge) }
            </p>
        };
    }
    let (class, text) = match lobby.state.auth {
        Auth::SignedOut => ("muted", t(K::NotSignedIn)),
        Auth::Pending => ("muted", t(K::CheckingToken)),
        Auth::SignedIn => ("ok", t(K::SignedInCanAdd)),
        Auth::Rejected => ("bad", t(K::TokenRejected)),
    };
    html! {
        <form class="auth" onsubmit={on_submit}>
            <label for="admin-token">{ t(K::AdminToken) }</label>
            <div class="row">
                <input id="admin-token" type="password" autocomplete="off"
                    value={(*token).clone()} oninput={on_input} />
                <button id="admin-login" type="submit" class="primary">{ t(K::SignIn) }</button>
            </div>
            <p data-testid="auth-result" class={classes!("auth-result", class)} role="status" aria-live="polite">
                { text }
            </p>
        </form>
    }
}
