//! The admin page's Webhooks section: the new webhook's form (checked as
//! the bridge checks it; the bridge's 400 shown beside the field it
//! names), its secret shown once with a Copy button, and the list with
//! each webhook's state, last deliveries, enable/disable, "send a test"
//! and delete; a status card's preview in the form and in each card's
//! entry. It talks to `/api/admin/webhooks` with the tab's admin token
//! (see [`super::api`]).

use protocol::{
    api::ApiError,
    watch::{Event, Format, ServerFilter},
    webhook::{Delivery, Kind, Webhook, WebhookState},
};
use wasm_bindgen_futures::spawn_local;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use super::{
    answer::use_admin_answer,
    api::{self, ApiFailure},
    draft::{Draft, DraftAction, DraftError, Field},
    form::Servers,
    preview::CardPreview,
};
use crate::{
    components::copy_address::CopyButton,
    i18n::{t, tf, K},
    services::browser::{local_time, TimeStyle},
};

/// Props of [`WebhooksSection`].
#[derive(Properties, PartialEq)]
pub struct WebhooksSectionProps {
    /// The tab is signed in: the API takes its token.
    pub signed_in: bool,
}

/// The label of an event.
fn event_label(e: Event) -> &'static str {
    t(match e {
        Event::ServerOnline => K::EventServerOnline,
        Event::ServerOffline => K::EventServerOffline,
        Event::LobbyOpened => K::EventLobbyOpened,
        Event::PlayersReached => K::EventPlayersReached,
    })
}

/// The Webhooks section of `/admin`.
#[component]
pub fn WebhooksSection(props: &WebhooksSectionProps) -> Html {
    let hooks = use_admin_answer(props.signed_in, 0, |signed_in| signed_in.then(api::list));
    // Why the list could not be read (`hooks.failed`); why the last
    // button's request was refused.
    let refused = use_state(|| None::<String>);
    let draft = use_reducer(Draft::default);
    let input = &draft.input;

    let reload = hooks.reload.clone();

    let edit = |field: Field| {
        let draft = draft.dispatcher();
        Callback::from(move |e: InputEvent| {
            let value = e.target_unchecked_into::<HtmlInputElement>().value();
            draft.dispatch(DraftAction::Edit(field, value));
        })
    };
    let on_format = {
        let draft = draft.dispatcher();
        Callback::from(move |e: Event_| {
            let format = match e
                .target_unchecked_into::<HtmlSelectElement>()
                .value()
                .as_str()
            {
                "discord" => Format::Discord,
                "discord-card" => Format::DiscordCard,
                _ => Format::Standard,
            };
            draft.dispatch(DraftAction::Format(format));
        })
    };
    let on_servers = |servers: Servers| {
        let draft = draft.dispatcher();
        Callback::from(move |_: Event_| draft.dispatch(DraftAction::Servers(servers)))
    };
    let on_event = |event: Event| {
        let draft = draft.dispatcher();
        Callback::from(move |_: Event_| draft.dispatch(DraftAction::Toggle(event)))
    };
    let on_submit = {
        let draft = draft.clone();
        let reload = reload.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let spec = match draft.input.check() {
                Ok(spec) => spec,
                Err(e) => {
                    draft.dispatch(DraftAction::Refused(DraftError::of(&ApiError::from(&e))));
                    return;
                }
            };
            draft.dispatch(DraftAction::Sending);
            let (draft, reload) = (draft.dispatcher(), reload.clone());
            spawn_local(async move {
                match api::create(&spec).await {
                    Ok(hook) => {
                        draft.dispatch(DraftAction::Created {
                            id: hook.id.clone(),
                            secret: hook.secret.unwrap_or_default(),
                        });
                        reload.emit(());
                    }
                    Err(ApiFailure::Said(e)) => {
                        draft.dispatch(DraftAction::Refused(DraftError::of(&e)))
                    }
                    Err(r @ ApiFailure::Failed) => {
                        draft.dispatch(DraftAction::Refused(DraftError {
                            field: "body".into(),
                            message: r.words(),
                        }))
                    }
                }
            });
        })
    };
    let on_done = {
        let draft = draft.dispatcher();
        Callback::from(move |_: MouseEvent| draft.dispatch(DraftAction::SecretKept))
    };

    let field_error = |field: &str| -> Option<(String, Html)> {
        let shown = draft.error.clone().filter(|e| e.field == field)?;
        let id = format!("webhook-{field}-error");
        Some((
            id.clone(),
            html! { <p class="error" id={id} data-testid={format!("webhook-error-{field}")}>{ shown.message }</p> },
        ))
    };
    let text_field = |id: &'static str,
                      field: &'static str,
                      label: &'static str,
                      value: &str,
                      mode: &'static str,
                      oninput: Callback<InputEvent>| {
        let err = field_error(field);
        html! {
            <div class={classes!("field", err.is_some().then_some("invalid"))}>
                <label for={id}>{ label }</label>
                <input id={id} type="text" inputmode={mode} autocomplete="off" spellcheck="false"
                    value={value.to_owned()} {oninput} disabled={!props.signed_in}
                    aria-invalid={err.is_some().to_string()}
                    aria-describedby={err.as_ref().map(|e| e.0.clone())} />
                if let Some((_, msg)) = err { { msg } }
            </div>
        }
    };
    let general = draft.error.clone().filter(DraftError::is_general);
    let events_error = field_error("events");
    let servers_error = field_error("servers");

    let form = html! {
        <form class="add-webhook" onsubmit={on_submit} novalidate=true>
            <fieldset>
                <legend>{ t(K::NewWebhook) }</legend>
                if let Some(e) = general {
                    <p class="error" role="alert" data-testid="webhook-error">{ e.message }</p>
                }
                <div class="webhook-fields">
                    { text_field("webhook-url", "url", t(K::WebhookUrl), &input.url, "url",
                        edit(Field::Url)) }
                    <div class="field">
                        <label for="webhook-format">{ t(K::WebhookFormat) }</label>
                        <select id="webhook-format" onchange={on_format} disabled={!props.signed_in}>
                            <option value="standard" selected={input.format == Format::Standard}>{ t(K::FormatStandard) }</option>
                            <option value="discord" selected={input.format == Format::Discord}>{ t(K::FormatDiscord) }</option>
                            <option value="discord-card" selected={input.format == Format::DiscordCard}>{ t(K::FormatDiscordCard) }</option>
                        </select>
                    </div>
                </div>
                if input.format == Format::DiscordCard {
                    <p class="muted" data-testid="webhook-card-note">{ t(K::WebhookCardNote) }</p>
                } else {
                <fieldset class={classes!("choices", events_error.is_some().then_some("invalid"))}
                    aria-describedby={events_error.as_ref().map(|e| e.0.clone())}>
                    <legend>{ t(K::WebhookEvents) }</legend>
                    { for Event::ALL.into_iter().map(|ev| {
                        let id = format!("webhook-event-{}", ev.name());
                        html! {
                            <label for={id.clone()} class="choice">
                                <input id={id} type="checkbox" checked={input.events.contains(&ev)}
                                    onchange={on_event(ev)} disabled={!props.signed_in} />
                                { event_label(ev) }
                            </label>
                        }
                    }) }
                    if let Some((_, msg)) = events_error { { msg } }
                </fieldset>
                }
                if input.format != Format::DiscordCard && input.events.contains(&Event::PlayersReached) {
                    { text_field("webhook-threshold", "threshold", t(K::WebhookThreshold),
                        &input.threshold, "numeric", edit(Field::Threshold)) }
                }
                <fieldset class={classes!("choices", servers_error.is_some().then_some("invalid"))}
                    aria-describedby={servers_error.as_ref().map(|e| e.0.clone())}>
                    <legend>{ t(K::WebhookServers) }</legend>
                    { for [
                        (Servers::All, "all", K::WebhookAllServers),
                        (Servers::Keys, "keys", K::WebhookKeys),
                        (Servers::NameContains, "name", K::WebhookNameContains),
                    ].into_iter().map(|(which, id, label)| {
                        let id = format!("webhook-servers-{id}");
                        html! {
                            <label for={id.clone()} class="choice">
                                <input id={id} type="radio" name="webhook-servers"
                                    checked={input.servers == which} onchange={on_servers(which)}
                                    disabled={!props.signed_in} />
                                { t(label) }
                            </label>
                        }
                    }) }
                    if input.servers == Servers::Keys {
                        <div class="field">
                            <label for="webhook-keys">{ t(K::WebhookKeysLabel) }</label>
                            <input id="webhook-keys" type="text" autocomplete="off" spellcheck="false"
                                value={input.keys.clone()} oninput={edit(Field::Keys)} />
                        </div>
                    }
                    if input.servers == Servers::NameContains {
                        <div class="field">
                            <label for="webhook-name">{ t(K::WebhookNameLabel) }</label>
                            <input id="webhook-name" type="text" autocomplete="off" spellcheck="false"
                                value={input.name_contains.clone()} oninput={edit(Field::NameContains)} />
                        </div>
                    }
                    if let Some((_, msg)) = servers_error { { msg } }
                </fieldset>
                if input.format == Format::DiscordCard {
                    <CardPreview servers={input.server_filter()} signed_in={props.signed_in} />
                }
                if input.format != Format::DiscordCard {
                    <div class="webhook-fields">
                        { text_field("webhook-cooldown", "cooldown", t(K::WebhookCooldown),
                            &input.cooldown, "numeric", edit(Field::Cooldown)) }
                    </div>
                }
                <div class="actions">
                    <button id="create-webhook" type="submit" class="primary"
                        disabled={!props.signed_in || draft.busy}>{ t(K::CreateWebhook) }</button>
                    if !props.signed_in {
                        <span class="muted">{ t(K::SignInFirst) }</span>
                    }
                </div>
            </fieldset>
        </form>
    };

    let secret_box = draft.secret.clone().map(|(_, secret)| {
        html! {
            <div class="webhook-secret" role="status" data-testid="webhook-secret">
                <p>{ t(K::WebhookSecretOnce) }</p>
                <p class="addr">
                    <code data-testid="webhook-secret-value">{ secret.clone() }</code>
                    <CopyButton text={secret} label={t(K::CopySecret)} />
                </p>
                <button id="webhook-secret-done" type="button" onclick={on_done}>{ t(K::Done) }</button>
            </div>
        }
    });

    let on_done = {
        let refused = refused.clone();
        let reload = reload.clone();
        Callback::from(move |why: Option<String>| {
            refused.set(why);
            reload.emit(());
        })
    };
    let list = match (&hooks.answer, (*hooks.failed).clone()) {
        (_, Some(why)) => html! { <p class="error" role="alert">{ why }</p> },
        (None, None) if props.signed_in => {
            html! { <p class="muted">{ t(K::LoadingWebhooks) }</p> }
        }
        (None, None) => html! {},
        (Some(list), None) if list.is_empty() => {
            html! { <p class="empty muted" data-testid="no-webhooks">{ t(K::NoWebhooks) }</p> }
        }
        (Some(list), None) => html! {
            <ul class="webhooks">
                { for list.iter().map(|hook| html! {
                    <WebhookCard key={hook.id.clone()} hook={hook.clone()} on_done={on_done.clone()} />
                }) }
            </ul>
        },
    };

    html! {
        <>
            <p class="muted">{ t(K::WebhooksHelp) }</p>
            { form }
            { for secret_box }
            if let Some(why) = (*refused).clone() {
                <p class="error" role="alert" data-testid="webhook-refused">{ why }</p>
            }
            { list }
        </>
    }
}

/// `web_sys::Event` (the name `Event` is the watch's).
type Event_ = web_sys::Event;

/// Props of [`WebhookCard`].
#[derive(Properties, PartialEq)]
struct WebhookCardProps {
    hook: Webhook,
    /// A button's request ended (with the bridge's refusal, if it was
    /// one): the list is read again.
    on_done: Callback<Option<String>>,
}

/// Where a webhook sends, for people: its host (a Discord URL's path holds
/// its token, so the page shows no more than the host).
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?']).next().unwrap_or(rest)
}

/// What a webhook's buttons do.
#[derive(Debug, Clone, Copy)]
enum Action {
    Test,
    Enable(bool),
    Delete,
}

impl Action {
    async fn run(self, id: &str) -> Result<(), ApiFailure> {
        match self {
            Action::Test => api::test(id).await.map(drop),
            Action::Enable(on) => api::set_enabled(id, on).await.map(drop),
            Action::Delete => api::delete(id).await,
        }
    }
}

/// What a delivery's result says.
fn outcome(d: &Delivery) -> String {
    let status = d.status.map(|s| format!("HTTP {s}"));
    let said = if d.ok {
        t(K::Delivered).to_owned()
    } else {
        tf(
            K::DeliveryFailed,
            &[&d.error.clone().unwrap_or_else(|| t(K::NoAnswer).into())],
        )
    };
    let mut parts = vec![said];
    if d.attempts > 1 {
        parts.push(tf(K::AttemptsCount, &[&d.attempts]));
    }
    if let Some(s) = status {
        parts.insert(0, s);
    }
    parts.join(" · ")
}

/// One webhook: what it watches, its state, its buttons and its last
/// deliveries.
#[component]
fn WebhookCard(props: &WebhookCardProps) -> Html {
    let busy = use_state(|| false);
    let hook = &props.hook;
    let act = |action: Action| {
        let busy = busy.clone();
        let on_done = props.on_done.clone();
        let id = hook.id.clone();
        Callback::from(move |_: MouseEvent| {
            let (busy, on_done, id) = (busy.clone(), on_done.clone(), id.clone());
            busy.set(true);
            spawn_local(async move {
                // The list read again shows the outcome (a test's delivery
                // too), or that nothing changed.
                let outcome = action.run(&id).await;
                busy.set(false);
                on_done.emit(outcome.err().map(|r| r.words()));
            });
        })
    };
    let previewing = use_state(|| false);
    let on_preview = {
        let previewing = previewing.clone();
        Callback::from(move |_: MouseEvent| previewing.set(!*previewing))
    };
    let enabled = hook.enabled;
    let on_toggle = act(Action::Enable(!enabled));
    let on_test = act(Action::Test);
    let on_delete = act(Action::Delete);

    let host = host_of(&hook.request.url).to_owned();
    let (state_class, state_text) = match hook.state {
        WebhookState::Active => ("ok", t(K::WebhookActive).to_owned()),
        WebhookState::Disabled => ("", t(K::WebhookDisabled).to_owned()),
        WebhookState::DisabledAfterFailures => {
            ("bad", tf(K::WebhookDisabledAfter, &[&hook.failures]))
        }
    };
    let format = t(match hook.request.format {
        Format::Standard => K::FormatStandard,
        Format::Discord => K::FormatDiscord,
        Format::DiscordCard => K::FormatDiscordCard,
    });
    let events: Vec<&str> = hook
        .request
        .events
        .iter()
        .map(|e| event_label(*e))
        .collect();
    let servers = match &hook.request.servers {
        ServerFilter::All => t(K::WebhookAllServers).to_owned(),
        ServerFilter::Keys(keys) => {
            let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
            keys.join(", ")
        }
        ServerFilter::NameContains(part) => format!("{}: {part}", t(K::WebhookNameLabel)),
    };
    let heading_id = format!("{}-title", hook.id);
    let deliveries = if hook.last_deliveries.is_empty() {
        html! { <p class="muted">{ t(K::NothingSent) }</p> }
    } else {
        html! {
            <table class="deliveries">
                <caption>{ tf(K::LastDeliveries, &[&host]) }</caption>
                <thead><tr>
                    <th scope="col">{ t(K::Time) }</th>
                    <th scope="col">{ t(K::Event) }</th>
                    <th scope="col">{ t(K::Outcome) }</th>
                </tr></thead>
                <tbody>
                    { for hook.last_deliveries.iter().map(|d| html! {
                        <tr class={if d.ok { "ok" } else { "bad" }} data-testid="delivery">
                            <td>{ local_time(d.at as f64, TimeStyle::DateTime) }</td>
                            <td>{ match d.event {
                                Kind::Event(e) => event_label(e),
                                Kind::Test => t(K::EventTest),
                            } }</td>
                            <td data-testid="delivery-outcome">{ outcome(d) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        }
    };
    html! {
        <li class="card webhook" data-testid="webhook" data-id={hook.id.clone()} data-host={host.clone()}
            aria-labelledby={heading_id.clone()}>
            <h3 id={heading_id}>{ tf(K::WebhookTo, &[&host]) }</h3>
            <p>
                <span class={classes!("pill", state_class)} data-testid="webhook-state">{ state_text }</span>
                { " " }<span class="muted">{ format }</span>
            </p>
            <p class="muted">{ events.join(", ") }{ " — " }{ servers }</p>
            if hook.request.format == Format::DiscordCard {
                <button type="button" class="show-preview" onclick={on_preview}
                    aria-expanded={previewing.to_string()}>
                    { t(if *previewing { K::HidePreview } else { K::ShowPreview }) }
                </button>
                // Read when asked: each preview is a request paid from the
                // admin's budget, and there may be many card webhooks.
                if *previewing {
                    <CardPreview servers={Some(hook.request.servers.clone())} signed_in=true />
                }
            }
            <div class="actions">
                <button type="button" class="send-test" onclick={on_test} disabled={*busy}>{ t(K::SendTest) }</button>
                <button type="button" class="toggle" onclick={on_toggle} disabled={*busy}>
                    { t(if enabled { K::Disable } else { K::Enable }) }
                </button>
                <button type="button" class="danger delete" onclick={on_delete} disabled={*busy}>{ t(K::Delete) }</button>
            </div>
            { deliveries }
        </li>
    }
}
