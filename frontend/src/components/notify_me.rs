//! "Notify me" on a server's page: choose comes online / opens its lobby /
//! at least N players, turn it on (the browser asks for permission only
//! on that click), change it or turn it off. The watch is kept in the
//! notify context; with permission, the browser's push subscription
//! carries every watch to the bridge (`PUT /api/push/subscription`).

use protocol::{watch::Event as WatchEvent, ServerKey};
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::components::icon::{Icon, SvgIcon};

use crate::{
    contexts::notify::{use_notify, NotifyAction},
    i18n::{t, K},
    notify::watches::{subscription_body, with_watch, Watch, CHOICES},
    services::push::{self, Permission},
};

/// What the last click did, said under the control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Quiet,
    Working,
    /// Pushed by the bridge, also with the page closed.
    OnPush,
    /// Only while a lobby page is open.
    OnTab,
    Denied,
    Off,
    Invalid,
    Full,
    /// Only while a lobby page is open: the bridge's Web Push is off.
    PushOff,
}

impl Status {
    fn text(self) -> &'static str {
        match self {
            Status::Quiet => "",
            Status::Working => t(K::NotifyWorking),
            Status::OnPush => t(K::NotifyOnPush),
            Status::OnTab => t(K::NotifyOnTab),
            Status::Denied => t(K::NotifyDenied),
            Status::Off => t(K::NotifyOff),
            Status::Invalid => t(K::NotifyPickOne),
            Status::Full => t(K::NotifyFull),
            Status::PushOff => t(K::NotifyPushOff),
        }
    }
}

fn label(event: WatchEvent) -> K {
    match event {
        WatchEvent::LobbyOpened => K::NotifyLobby,
        WatchEvent::PlayersReached => K::NotifyPlayers,
        _ => K::NotifyOnline,
    }
}

/// Sends every watch of this browser to the bridge through its push
/// subscription (made now if there is none); which status that earns.
async fn push_watches(list: &[Watch]) -> Status {
    match push::subscribe().await {
        Ok(sub) => match push::put_watches(&subscription_body(&sub, list)).await {
            Ok(()) => Status::OnPush,
            Err(_) => Status::OnTab,
        },
        Err(push::PushError::Off) => Status::PushOff,
        Err(_) => Status::OnTab,
    }
}

/// Props of [`NotifyMe`].
#[derive(Properties, PartialEq)]
pub struct NotifyMeProps {
    pub server: ServerKey,
    pub name: AttrValue,
}

#[component]
pub fn NotifyMe(props: &NotifyMeProps) -> Html {
    let notify = use_notify();
    let current = notify
        .watches
        .iter()
        .find(|w| w.key == props.server)
        .cloned();
    let open = use_state_eq(|| false);
    let status = use_state_eq(|| Status::Quiet);
    // The form's choices, from the watch when there is one.
    let chosen = use_state_eq(|| {
        current
            .as_ref()
            .map_or_else(|| vec![WatchEvent::LobbyOpened], |w| w.events.clone())
    });
    let threshold = use_state_eq(|| current.as_ref().and_then(|w| w.threshold).unwrap_or(2));

    let toggle_form = {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    let on_submit = {
        let (notify, open, status) = (notify.clone(), open.clone(), status.clone());
        let (chosen, threshold) = (chosen.clone(), threshold.clone());
        let (key, name) = (props.server, props.name.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let Some(watch) = Watch::new(key, &name, &chosen, *threshold) else {
                status.set(Status::Invalid);
                return;
            };
            let Some(list) = with_watch(&notify.watches, key, Some(watch)) else {
                status.set(Status::Full);
                return;
            };
            // Asked here, in the click: browsers allow it only there.
            let asked = push::ask();
            notify.dispatch(NotifyAction::SetWatches(list.clone()));
            open.set(false);
            status.set(Status::Working);
            let status = status.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let said = match push::answer(asked).await {
                    Permission::Granted => push_watches(&list).await,
                    Permission::Denied => Status::Denied,
                    _ => Status::OnTab,
                };
                status.set(said);
            });
        })
    };
    let turn_off = {
        let (notify, status, key) = (notify.clone(), status.clone(), props.server);
        Callback::from(move |_: MouseEvent| {
            let Some(list) = with_watch(&notify.watches, key, None) else {
                return;
            };
            notify.dispatch(NotifyAction::SetWatches(list.clone()));
            status.set(Status::Off);
            wasm_bindgen_futures::spawn_local(async move {
                if list.is_empty() {
                    push::unsubscribe().await;
                } else if push::permission() == Permission::Granted {
                    push_watches(&list).await;
                }
            });
        })
    };

    let choice = |event: WatchEvent| {
        let checked = chosen.contains(&event);
        let onchange = {
            let chosen = chosen.clone();
            Callback::from(move |e: Event| {
                let on = e
                    .target()
                    .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
                    .is_some_and(|i| i.checked());
                let mut next: Vec<WatchEvent> =
                    chosen.iter().copied().filter(|&c| c != event).collect();
                if on {
                    next.push(event);
                }
                chosen.set(next);
            })
        };
        let id = format!("notify-{}", event.name());
        html! {
            <div class="notify-choice">
                <input type="checkbox" id={id.clone()} {checked} {onchange} data-event={event.name()} />
                <label for={id}>{ t(label(event)) }</label>
                if event == WatchEvent::PlayersReached {
                    <input type="number" class="notify-threshold" min="1" max="255"
                        value={threshold.to_string()} aria-label={t(K::NotifyPlayerCount)}
                        data-testid="notify-threshold"
                        oninput={{
                            let threshold = threshold.clone();
                            Callback::from(move |e: InputEvent| {
                                let value = e.target()
                                    .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
                                    .map(|i| i.value())
                                    .unwrap_or_default();
                                // 0 is refused when the form is sent.
                                threshold.set(value.trim().parse().unwrap_or(0));
                            })
                        }} />
                }
            </div>
        }
    };
    let body = if *open {
        html! {
            <form class="notify-form" onsubmit={on_submit} data-testid="notify-form">
                <fieldset>
                    <legend>{ t(K::NotifyWhen) }</legend>
                    { for CHOICES.into_iter().map(choice) }
                </fieldset>
                <button type="submit" class="primary" data-testid="notify-on">{ t(K::NotifyTurnOn) }</button>
                <button type="button" onclick={toggle_form.clone()}>{ t(K::NotifyCancel) }</button>
            </form>
        }
    } else if let Some(w) = &current {
        let what: Vec<String> = w
            .events
            .iter()
            .map(|&e| match (e, w.threshold) {
                (WatchEvent::PlayersReached, Some(n)) => format!("{} {n}", t(label(e))),
                _ => t(label(e)).to_owned(),
            })
            .collect();
        html! {
            <>
                <p class="notify-summary" data-testid="notify-summary">
                    { format!("{} {}", t(K::NotifyWhen), what.join(", ")) }
                </p>
                <button type="button" onclick={toggle_form.clone()} data-testid="notify-change">{ t(K::NotifyChange) }</button>
                <button type="button" onclick={turn_off} data-testid="notify-off">{ t(K::NotifyTurnOff) }</button>
            </>
        }
    } else {
        html! {
            <button type="button" class="notify-me" onclick={toggle_form}
                data-testid="notify-me">
                <SvgIcon icon={Icon::Bell} />{ " " }{ t(K::NotifyMe) }
            </button>
        }
    };
    html! {
        <div class="notify" data-testid="notify">
            { body }
            <p class="muted notify-status" role="status" data-testid="notify-status">{ status.text() }</p>
        </div>
    }
}
