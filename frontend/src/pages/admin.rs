//! `/admin`: sign in with the admin token, run test servers from this
//! browser and manage the bridge's webhooks. The servers themselves belong to the app (see
//! `test_servers::provider`), so leaving this page keeps them registered.

use protocol::{bridge::MasterState, Registration};
use yew::prelude::*;

use crate::{
    components::{auth_panel::AuthPanel, header::Header},
    contexts::lobby::use_lobby,
    i18n::{t, K},
    state::Auth,
    test_servers::{
        add_form::AddServerForm, card::TestServerCard, provider::use_test_servers, TestServerDef,
    },
    webhooks::{push::PushSection, section::WebhooksSection},
};

#[component]
pub fn Admin() -> Html {
    let lobby = use_lobby();
    let servers = use_test_servers();
    {
        let servers = servers.clone();
        use_effect_with((), move |_| servers.activate());
    }
    let signed_in = lobby.state.auth == Auth::SignedIn;

    let on_add = {
        let servers = servers.clone();
        Callback::from(move |reg: Registration| servers.add(reg))
    };
    let on_samples = {
        let servers = servers.clone();
        Callback::from(move |_: MouseEvent| servers.add_samples())
    };
    let on_change = {
        let servers = servers.clone();
        Callback::from(move |d: TestServerDef| servers.update(d))
    };
    let on_remove = {
        let servers = servers.clone();
        Callback::from(move |id: u64| servers.remove(id))
    };
    let on_remove_all = {
        let servers = servers.clone();
        Callback::from(move |_: MouseEvent| servers.remove_all())
    };

    // Only a current list confirms a registration: not one kept from a
    // closed connection, nor the last one a master sent before it went down.
    let fresh = !lobby.state.disconnected() && lobby.state.master != Some(MasterState::Down);
    let list_at = lobby.state.received_perf_ms;
    let ts = &*servers.state;
    html! {
        <>
            <Header />
            <main class="page admin">
                <h1>{ t(K::Admin) }</h1>
                <section class="card" aria-labelledby="auth-title">
                    <h2 id="auth-title">{ t(K::SignIn) }</h2>
                    <AuthPanel />
                </section>
                <section class="card" aria-labelledby="ts-title">
                    <h2 id="ts-title">{ t(K::TestServers) }</h2>
                    <p class="muted">
                        { t(K::TestServersHelp) }
                    </p>
                    <AddServerForm on_add={on_add} enabled={signed_in} />
                    <div class="actions">
                        <button id="add-samples" type="button" onclick={on_samples} disabled={!signed_in}>
                            { t(K::AddSamples) }
                        </button>
                        if !ts.defs.is_empty() {
                            <button id="remove-all" type="button" class="danger" onclick={on_remove_all}>
                                { t(K::RemoveAll) }
                            </button>
                        }
                    </div>
                    if ts.defs.is_empty() {
                        <p class="empty muted">{ t(K::NoTestServers) }</p>
                    } else {
                        <ul class="test-servers">
                            { for ts.defs.iter().map(|d| {
                                let rows = lobby.state.list.rows();
                                let listed = ts.confirmed(d, rows.iter().map(|r| &*r.entry), list_at, fresh);
                                html! {
                                    <TestServerCard key={d.id.to_string()} def={d.clone()} listed={listed}
                                        phase={ts.phase(d.id)} error={ts.errors.get(&d.id).cloned()}
                                        on_change={on_change.clone()} on_remove={on_remove.clone()} />
                                }
                            }) }
                        </ul>
                    }
                </section>
                <section class="card" aria-labelledby="webhooks-title">
                    <h2 id="webhooks-title">{ t(K::Webhooks) }</h2>
                    <WebhooksSection signed_in={signed_in} />
                </section>
                <section class="card" aria-labelledby="push-title">
                    <h2 id="push-title">{ t(K::PushTitle) }</h2>
                    <PushSection signed_in={signed_in} />
                </section>
            </main>
        </>
    }
}
