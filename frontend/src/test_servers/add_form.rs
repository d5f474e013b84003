//! The "add a test server" form, validated as you type with the protocol
//! crate's own rules and messages.

use web_sys::HtmlInputElement;
use yew::prelude::*;

use protocol::Registration;

use super::form::{validate_form, FormInput};
use crate::i18n::{t, K};

/// Props of [`AddServerForm`].
#[derive(Properties, PartialEq)]
pub struct AddServerFormProps {
    /// The registration the form validated.
    pub on_add: Callback<Registration>,
    /// Adding needs a signed-in tab.
    pub enabled: bool,
}

#[derive(Clone, Copy, PartialEq, Default)]
struct Touched {
    name: bool,
    address: bool,
    port: bool,
}

#[component]
pub fn AddServerForm(props: &AddServerFormProps) -> Html {
    let input = use_state(FormInput::default);
    let touched = use_state(Touched::default);
    let (errors, valid) = validate_form(&input);

    let edit = |f: fn(&mut FormInput, String), t: fn(&mut Touched)| {
        let input = input.clone();
        let touched = touched.clone();
        Callback::from(move |e: InputEvent| {
            let mut next = (*input).clone();
            f(
                &mut next,
                e.target_unchecked_into::<HtmlInputElement>().value(),
            );
            input.set(next);
            let mut tt = *touched;
            t(&mut tt);
            touched.set(tt);
        })
    };
    let on_submit = {
        let input = input.clone();
        let touched = touched.clone();
        let on_add = props.on_add.clone();
        let valid = valid.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            match &valid {
                Some(v) => {
                    on_add.emit(v.clone());
                    input.set(FormInput::default());
                    touched.set(Touched::default());
                }
                None => touched.set(Touched {
                    name: true,
                    address: true,
                    port: true,
                }),
            }
        })
    };

    let field = |id: &'static str,
                 label: &'static str,
                 wire: &'static str,
                 value: &str,
                 shown: bool,
                 placeholder: &'static str,
                 mode: &'static str,
                 oninput: Callback<InputEvent>| {
        let error = errors
            .for_field(wire)
            .filter(|_| shown)
            .map(|e| e.to_string());
        let error_id = format!("{id}-error");
        html! {
            <div class={classes!("field", error.is_some().then_some("invalid"))}>
                <label for={id}>{ label }</label>
                <input id={id} type="text" inputmode={mode} autocomplete="off" spellcheck="false"
                    placeholder={placeholder} value={value.to_owned()} {oninput}
                    aria-invalid={error.is_some().to_string()}
                    aria-describedby={error.as_ref().map(|_| error_id.clone())} />
                if let Some(msg) = error {
                    <p class="error" id={error_id} data-testid={format!("error-{wire}")}>{ msg }</p>
                }
            </div>
        }
    };

    html! {
        <form class="add-server" onsubmit={on_submit} novalidate=true>
            <fieldset>
                <legend>{ t(K::AddTestServer) }</legend>
                <div class="fields">
                    { field("new-name", t(K::Name), "serverName", &input.name, touched.name,
                        "Server von Bösewicht", "text", edit(|i, v| i.name = v, |t| t.name = true)) }
                    { field("new-address", t(K::Address), "serverAddress", &input.address, touched.address,
                        t(K::AddressPlaceholder), "url", edit(|i, v| i.address = v, |t| t.address = true)) }
                    { field("new-port", t(K::Port), "serverPort", &input.port, touched.port,
                        "20000", "numeric", edit(|i, v| i.port = v, |t| t.port = true)) }
                </div>
                <div class="actions">
                    <button id="add-server" type="submit" class="primary" disabled={!props.enabled}>{ t(K::AddTestServerButton) }</button>
                    if !props.enabled {
                        <span class="muted">{ t(K::SignInFirst) }</span>
                    }
                </div>
            </fieldset>
        </form>
    }
}
