//! An address with a Copy button, or "hidden" when the bridge hides it;
//! and the Copy button itself, which the embed snippets use too.

use gloo_timers::callback::Timeout;
use yew::prelude::*;

use crate::i18n::{t, tf, K};

use crate::services::browser;

/// Props of [`CopyAddress`].
#[derive(Properties, PartialEq)]
pub struct CopyAddressProps {
    /// `host:port`; `None` when hidden.
    pub address: Option<String>,
    /// Whose address it is, for the button's accessible name.
    pub owner: AttrValue,
}

/// Players join by address, so copying it is one click; the button says
/// "Copied" for a moment.
#[component]
pub fn CopyAddress(props: &CopyAddressProps) -> Html {
    let Some(address) = props.address.clone() else {
        return html! { <span class="muted">{ t(K::AddrHidden) }</span> };
    };
    html! {
        <span class="addr">
            <code>{ address.clone() }</code>
            <CopyButton text={address} label={tf(K::CopyAddressOf, &[&props.owner])} />
        </span>
    }
}

/// Props of [`CopyButton`].
#[derive(Properties, PartialEq)]
pub struct CopyButtonProps {
    /// What goes to the clipboard.
    pub text: AttrValue,
    /// The button's accessible name ("Copy the address of …").
    pub label: AttrValue,
}

/// "Copy", which says "Copied" for a moment after a click.
#[component]
pub fn CopyButton(props: &CopyButtonProps) -> Html {
    let copied = use_state(|| false);
    let on_copy = {
        let copied = copied.clone();
        let text = props.text.clone();
        Callback::from(move |_: MouseEvent| {
            browser::copy_to_clipboard(&text);
            copied.set(true);
            let copied = copied.clone();
            Timeout::new(1500, move || copied.set(false)).forget();
        })
    };
    html! {
        <button type="button" class="copy" onclick={on_copy} aria-label={props.label.clone()}>
            { t(if *copied { K::Copied } else { K::Copy }) }
        </button>
    }
}
