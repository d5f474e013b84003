//! The admin page's Web Push section: whether the bridge sends pushes
//! (and, when it does not, why: it has no contact for the push services),
//! how many subscriptions it holds of how many, and the sources (client
//! addresses, IPv6 /64s) holding the most, each with a button that
//! deletes all of its subscriptions. It talks to `/api/admin/push` with
//! the tab's admin token (see [`super::api`]).

use wasm_bindgen_futures::spawn_local;
use yew::prelude::*;

use super::{answer::use_admin_answer, api};
use crate::{
    i18n::{t, tf, K},
    services::browser::{local_time, TimeStyle},
};

/// Props of [`PushSection`].
#[derive(Properties, PartialEq)]
pub struct PushSectionProps {
    /// The tab is signed in: the API takes its token.
    pub signed_in: bool,
}

/// The Web Push section of `/admin`.
#[component]
pub fn PushSection(props: &PushSectionProps) -> Html {
    let read = use_admin_answer(props.signed_in, 0, |signed_in| {
        signed_in.then(api::push_status)
    });
    let (failed, reload) = (read.failed.clone(), read.reload.clone());
    let busy = use_state(|| false);

    let purge = {
        let (reload, failed, busy) = (reload.clone(), failed.clone(), busy.clone());
        Callback::from(move |source: String| {
            let (reload, failed, busy) = (reload.clone(), failed.clone(), busy.clone());
            busy.set(true);
            spawn_local(async move {
                if let Err(r) = api::purge_push_source(&source).await {
                    failed.set(Some(r.words()));
                }
                busy.set(false);
                reload.emit(());
            });
        })
    };

    let body = match (&read.answer, &*read.failed) {
        (_, Some(why)) => html! { <p class="error" role="alert">{ why.clone() }</p> },
        (None, None) if props.signed_in => html! { <p class="muted">{ t(K::LoadingPush) }</p> },
        (None, None) => html! { <p class="muted">{ t(K::SignInFirst) }</p> },
        (Some(s), None) => {
            let state = match &s.off {
                Some(why) => html! {
                    <p class="error" role="status" data-testid="push-off">
                        // The bridge's reason, without repeating that it is off.
                        { tf(K::PushOff, &[&why.strip_prefix("Web Push is off: ").unwrap_or(why)]) }
                    </p>
                },
                None => html! {
                    <p data-testid="push-on">
                        { tf(K::PushOn, &[&s.contact.as_deref().unwrap_or_default()]) }
                    </p>
                },
            };
            let counts = tf(
                K::PushCounts,
                &[
                    &s.subscriptions.to_string(),
                    &s.max_subscriptions.to_string(),
                    &s.max_per_source.to_string(),
                    &(s.expire_after / 86_400).to_string(),
                ],
            );
            let sources = if s.sources.is_empty() {
                html! { <p class="empty muted" data-testid="no-push-sources">{ t(K::NoPushSources) }</p> }
            } else {
                html! {
                    <table class="push-sources" data-testid="push-sources">
                        <thead><tr>
                            <th scope="col">{ t(K::PushSource) }</th>
                            <th scope="col">{ t(K::PushSubscriptions) }</th>
                            <th scope="col">{ t(K::PushOldest) }</th>
                            <th scope="col"><span class="visually-hidden">{ t(K::PushPurge) }</span></th>
                        </tr></thead>
                        <tbody>
                            { for s.sources.iter().map(|src| {
                                let source = src.source.clone();
                                let onclick = {
                                    let (purge, source) = (purge.clone(), source.clone());
                                    Callback::from(move |_: MouseEvent| purge.emit(source.clone()))
                                };
                                html! {
                                    <tr key={source.clone()}>
                                        <td class="addr">{ source.clone() }</td>
                                        <td>{ src.subscriptions }</td>
                                        <td>{ local_time(src.oldest as f64, TimeStyle::DateTime) }</td>
                                        <td>
                                            <button type="button" class="danger" disabled={*busy} {onclick}
                                                aria-label={tf(K::PushPurgeSource, &[&source])}>
                                                { t(K::PushPurge) }
                                            </button>
                                        </td>
                                    </tr>
                                }
                            }) }
                        </tbody>
                    </table>
                }
            };
            html! { <>{ state }<p class="muted">{ counts }</p>{ sources }</> }
        }
    };
    html! {
        <div class="push-admin">
            <p class="muted">{ t(K::PushHelp) }</p>
            { body }
        </div>
    }
}
