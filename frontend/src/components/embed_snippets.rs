//! The server page's "Embed" section: the server's badge as a site would
//! show it, and the snippets that show it (HTML, Markdown, BBCode) or its
//! live card (an iframe), each with a Copy button.

use protocol::ServerKey;
use yew::prelude::*;

use crate::{
    components::copy_address::CopyButton,
    i18n::{t, tf, K},
    services::browser,
    snippets::{Format, Links},
};

/// Props of [`EmbedSnippets`].
#[derive(Properties, PartialEq)]
pub struct EmbedSnippetsProps {
    pub server: ServerKey,
    pub name: AttrValue,
}

/// The badge and one read-only field per snippet format.
#[component]
pub fn EmbedSnippets(props: &EmbedSnippetsProps) -> Html {
    let links = Links::new(&browser::origin(), props.server);
    let fields = Format::ALL.into_iter().map(|f| {
        let text = links.snippet(f, &props.name);
        html! {
            <div class="snippet">
                <label for={f.id()}>{ f.label() }</label>
                <div class="snippet-row">
                    <textarea id={f.id()} readonly=true rows="2" spellcheck="false" value={text.clone()} />
                    <CopyButton text={text} label={tf(K::CopySnippet, &[&f.label()])} />
                </div>
            </div>
        }
    });
    html! {
        <>
            <p class="muted">{ t(K::EmbedHelp) }</p>
            <p class="badge-preview">
                <img src={links.badge.clone()} alt={tf(K::BadgeOf, &[&props.name])} data-testid="badge" />
            </p>
            { for fields }
        </>
    }
}
