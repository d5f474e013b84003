//! One tab per source: the lobby's own servers, then every source of other
//! games' servers the bridge queries.

use std::rc::Rc;

use protocol::bridge::GameServers;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::{
    games::{online_count, tab_subtitle, tab_title},
    i18n::{count, t, tf, K},
    query::ListQuery,
    tab_keys::next_tab,
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
/// Keyboard as WAI-ARIA tabs: Tab reaches the selected tab, arrows, Home
/// and End select another and move focus to it.
#[component]
pub fn SourceTabs(props: &SourceTabsProps) -> Html {
    let q = &props.query;
    let ids: Vec<Option<String>> = std::iter::once(None)
        .chain(props.games.sources.iter().map(|s| Some(s.id.clone())))
        .collect();
    let current = ids.iter().position(|id| *id == q.source);
    let list = use_node_ref();
    let refocus = use_mut_ref(|| false);
    {
        let (list, refocus) = (list.clone(), refocus.clone());
        use_effect(move || {
            if std::mem::take(&mut *refocus.borrow_mut()) {
                let selected = list
                    .cast::<web_sys::Element>()
                    .and_then(|l| l.query_selector("[aria-selected=true]").ok().flatten())
                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
                if let Some(tab) = selected {
                    let _ = tab.focus();
                }
            }
        });
    }
    let onkeydown = {
        let (q, ids, cb) = (q.clone(), ids.clone(), props.on_change.clone());
        Callback::from(move |e: KeyboardEvent| {
            if let Some(next) = next_tab(current, ids.len(), &e.key()) {
                e.prevent_default();
                *refocus.borrow_mut() = true;
                cb.emit(q.with_source(ids[next].clone()));
            }
        })
    };
    let tab = |index: usize, title: String, subtitle: String| {
        let source = ids[index].as_deref();
        let selected = current == Some(index);
        let focusable = current.unwrap_or(0) == index;
        let onclick = {
            let next = q.with_source(source.map(str::to_owned));
            let cb = props.on_change.clone();
            Callback::from(move |_: MouseEvent| cb.emit(next.clone()))
        };
        html! {
            <button type="button" role="tab" class={classes!("source-tab", selected.then_some("selected"))}
                data-testid="source-tab" data-source={source.unwrap_or("lobby").to_owned()}
                aria-selected={if selected { "true" } else { "false" }} aria-controls="source-panel"
                tabindex={if focusable { "0" } else { "-1" }} {onclick}>
                <span class="tab-title" dir="auto">{ title }</span>
                <span class="tab-sub">{ subtitle }</span>
            </button>
        }
    };
    html! {
        <nav class="sources" aria-label={t(K::Games)}>
            <div role="tablist" ref={list} {onkeydown}>
                { tab(0, t(K::Lobby).to_owned(), count(props.lobby_count as u64, K::ServerOne, K::ServerMany)) }
                { for props.games.sources.iter().enumerate().map(|(i, s)| {
                    let sub = match &s.error {
                        Some(_) => format!("{} · {}", tab_subtitle(s), t(K::Unreachable)),
                        None => format!("{} · {}", tab_subtitle(s), tf(K::OnlineCount, &[&online_count(s)])),
                    };
                    tab(i + 1, tab_title(s), sub)
                }) }
            </div>
        </nav>
    }
}
