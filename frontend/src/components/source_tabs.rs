//! One tab per source: the lobby's own servers, then every source of other
//! games' servers the bridge queries.

use std::rc::Rc;

use protocol::bridge::GameServers;
use yew::prelude::*;

use crate::{
    games::{online_count, tab_subtitle, tab_title},
    listing::plural,
    query::ListQuery,
};

/// Props of [`SourceTabs`].
#[derive(Properties, PartialEq)]
pub struct SourceTabsProps {
    pub games: Rc<GameServers>,
    /// Servers in the lobby's own list.
    pub lobby_count: usize,
    pub query: ListQuery,
    pub on_change: Callback<ListQuery>,
}

/// Shown only when the bridge has sources; the selected tab is `src=`.
#[component]
pub fn SourceTabs(props: &SourceTabsProps) -> Html {
    let q = &props.query;
    let tab = |source: Option<&str>, title: String, subtitle: String| {
        let selected = q.source.as_deref() == source;
        let onclick = {
            let next = q.with_source(source.map(str::to_owned));
            let cb = props.on_change.clone();
            Callback::from(move |_: MouseEvent| cb.emit(next.clone()))
        };
        html! {
            <button type="button" role="tab" class={classes!("source-tab", selected.then_some("selected"))}
                data-testid="source-tab" data-source={source.unwrap_or("lobby").to_owned()}
                aria-selected={if selected { "true" } else { "false" }} aria-controls="source-panel" {onclick}>
                <span class="tab-title" dir="auto">{ title }</span>
                <span class="tab-sub">{ subtitle }</span>
            </button>
        }
    };
    html! {
        <nav class="sources" aria-label="Games">
            <div role="tablist">
                { tab(None, "Lobby".to_owned(), plural(props.lobby_count as u64, "server", "servers")) }
                { for props.games.sources.iter().map(|s| {
                    let sub = match &s.error {
                        Some(_) => format!("{} · unreachable", tab_subtitle(s)),
                        None => format!("{} · {} online", tab_subtitle(s), online_count(s)),
                    };
                    tab(Some(&s.id), tab_title(s), sub)
                }) }
            </div>
        </nav>
    }
}
