//! "Join": a link to the game's own way in, the bridge's `--join-url`
//! template filled with a server's address and port (`docs/protocol.md`
//! §2.6). Nothing without a template or while addresses are hidden.

use yew::prelude::*;

use crate::i18n::{t, tf, K};

/// Props of [`JoinLink`].
#[derive(Properties, PartialEq)]
pub struct JoinLinkProps {
    /// The filled link; `None` draws nothing.
    pub href: Option<String>,
    /// Whose it is, for the link's accessible name.
    pub owner: AttrValue,
    /// Opens in a new tab (from the embed, another site's frame).
    #[prop_or_default]
    pub new_tab: bool,
}

/// The link, styled as a button.
#[component]
pub fn JoinLink(props: &JoinLinkProps) -> Html {
    let Some(href) = props.href.clone() else {
        return html! {};
    };
    let (target, rel) = if props.new_tab {
        (Some("_blank"), Some("noopener"))
    } else {
        (None, None)
    };
    html! {
        <a class="join" data-testid="join" {href} {target} {rel}
            aria-label={tf(K::JoinServer, &[&props.owner])}>
            { t(K::Join) }
        </a>
    }
}
