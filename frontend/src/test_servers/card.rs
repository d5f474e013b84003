//! One test server's card: its status and controls for its stats. The
//! server's connection lives in the app-level provider (`provider`).

use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use super::{Phase, TestServerDef};
use crate::i18n::{t, tf, K};

/// Props of [`TestServerCard`].
#[derive(Properties, PartialEq)]
pub struct TestServerCardProps {
    pub def: TestServerDef,
    /// The server shows up in the live list.
    pub listed: bool,
    /// Where its connection stands.
    pub phase: Phase,
    /// The bridge's last refusal on its connection.
    #[prop_or_default]
    pub error: Option<String>,
    pub on_change: Callback<TestServerDef>,
    pub on_remove: Callback<u64>,
}

#[component]
pub fn TestServerCard(props: &TestServerCardProps) -> Html {
    let def = &props.def;
    let (tone, status) = props.phase.status(props.listed);

    let update = |f: fn(&mut TestServerDef, String)| {
        let def = def.clone();
        let cb = props.on_change.clone();
        move |value: String| {
            let mut next = def.clone();
            f(&mut next, value);
            if next != def {
                cb.emit(next);
            }
        }
    };
    let on_current = {
        let u = update(|d, v| {
            if let Ok(n) = v.trim().parse::<u32>() {
                d.current = n;
            }
        });
        Callback::from(move |e: Event| u(e.target_unchecked_into::<HtmlInputElement>().value()))
    };
    let step = |delta: i64| {
        let u = update(|d, v| {
            let delta: i64 = v.parse().unwrap_or(0);
            d.current = (i64::from(d.current) + delta).clamp(0, i64::from(u32::MAX)) as u32;
        });
        Callback::from(move |_: MouseEvent| u(delta.to_string()))
    };
    let on_max = {
        let u = update(|d, v| {
            if let Ok(n) = v.parse::<u8>() {
                d.max = n;
            }
        });
        Callback::from(move |e: Event| u(e.target_unchecked_into::<HtmlSelectElement>().value()))
    };
    let on_open = {
        let u = update(|d, v| d.open = v == "true");
        Callback::from(move |e: Event| {
            u(e.target_unchecked_into::<HtmlInputElement>()
                .checked()
                .to_string())
        })
    };
    let on_mode = {
        let u = update(|d, v| {
            if let Ok(n) = v.parse::<u8>() {
                d.mode = n;
            }
        });
        Callback::from(move |e: Event| u(e.target_unchecked_into::<HtmlSelectElement>().value()))
    };
    let on_remove = {
        let cb = props.on_remove.clone();
        let id = def.id;
        Callback::from(move |_: MouseEvent| cb.emit(id))
    };
    let uid = |what: &str| format!("ts-{}-{what}", def.id);
    let addr = if def.address.contains(':') {
        format!("[{}]:{}", def.address, def.port)
    } else {
        format!("{}:{}", def.address, def.port)
    };

    html! {
        <li class="test-server" data-testid="test-server" data-name={def.name.clone()}>
            <div class="ts-head">
                <div>
                    <p class="ts-name" dir="auto">{ &def.name }</p>
                    <code class="muted">{ addr }</code>
                </div>
                <span class={classes!("pill", "small", tone)} data-testid="test-server-status">{ status }</span>
            </div>
            if let Some(err) = &props.error {
                <p class="error">{ tf(K::BridgeError, &[&err]) }</p>
            }
            <div class="ts-controls">
                <div class="control">
                    <label for={uid("current")}>{ t(K::Players) }</label>
                    <div class="stepper">
                        <button type="button" aria-label={t(K::PlayerFewer)} onclick={step(-1)}>{"−"}</button>
                        <input id={uid("current")} type="number" min="0" value={def.current.to_string()} onchange={on_current} />
                        <button type="button" aria-label={t(K::PlayerMore)} onclick={step(1)}>{"+"}</button>
                    </div>
                </div>
                <div class="control">
                    <label for={uid("max")}>{ t(K::Max) }</label>
                    <select id={uid("max")} onchange={on_max}>
                        { for (2u8..=4).map(|n| html! { <option value={n.to_string()} selected={def.max == n}>{ n }</option> }) }
                    </select>
                </div>
                <div class="control">
                    <label for={uid("mode")}>{ t(K::Mode) }</label>
                    <select id={uid("mode")} onchange={on_mode}>
                        <option value="1" selected={def.mode != 2}>{ protocol::GameplayMode::StandardA.label() }</option>
                        <option value="2" selected={def.mode == 2}>{ protocol::GameplayMode::StandardAB.label() }</option>
                    </select>
                </div>
                <label class="check control">
                    <input type="checkbox" checked={def.open} onchange={on_open} />
                    { t(K::LobbyOpen) }
                </label>
                <button type="button" class="danger remove" onclick={on_remove}
                    aria-label={tf(K::RemoveNamed, &[&def.name])}>{ t(K::Remove) }</button>
            </div>
        </li>
    }
}
