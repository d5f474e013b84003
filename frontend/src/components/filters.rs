//! The search box and filters above the list; they edit the URL query.

use protocol::GameplayMode;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::{
    i18n::{t, K},
    query::ListQuery,
};

/// Props of [`Filters`].
#[derive(Properties, PartialEq)]
pub struct FiltersProps {
    pub query: ListQuery,
    /// Receives the whole new query (always back on the first page).
    pub on_change: Callback<ListQuery>,
}

/// Search, "hide full" and "hide empty"; on the lobby's own list also
/// "open lobbies only" and the mode, which other games do not have.
#[component]
pub fn Filters(props: &FiltersProps) -> Html {
    let q = &props.query;
    let lobby = q.source.is_none();
    let change = |f: fn(&mut ListQuery, bool)| {
        let q = q.clone();
        let cb = props.on_change.clone();
        Callback::from(move |e: Event| {
            let checked = e.target_unchecked_into::<HtmlInputElement>().checked();
            let mut next = q.clone();
            f(&mut next, checked);
            next.page = 0;
            cb.emit(next);
        })
    };
    let on_search = {
        let q = q.clone();
        let cb = props.on_change.clone();
        Callback::from(move |e: InputEvent| {
            let value = e.target_unchecked_into::<HtmlInputElement>().value();
            cb.emit(ListQuery {
                search: value,
                page: 0,
                ..q.clone()
            });
        })
    };
    let on_mode = {
        let q = q.clone();
        let cb = props.on_change.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<HtmlSelectElement>().value();
            let mode = value
                .parse::<u64>()
                .ok()
                .and_then(|n| GameplayMode::from_wire(n).ok());
            cb.emit(ListQuery {
                mode,
                page: 0,
                ..q.clone()
            });
        })
    };
    let mode_value = q.mode.map(|m| m.to_wire().to_string()).unwrap_or_default();
    html! {
        <div class="filters" role="search">
            <label class="search">
                <span class="visually-hidden">{ t(K::SearchServers) }</span>
                <input id="search" type="search"
                    placeholder={t(if lobby { K::SearchLobby } else { K::SearchGames })}
                    autocomplete="off" spellcheck="false"
                    value={q.search.clone()} oninput={on_search} />
            </label>
            if lobby {
                <label class="check">
                    <input id="filter-open" type="checkbox" checked={q.open_only}
                        onchange={change(|q, v| q.open_only = v)} />
                    { t(K::OpenOnly) }
                </label>
            }
            <label class="check">
                <input id="filter-hide-full" type="checkbox" checked={q.hide_full}
                    onchange={change(|q, v| q.hide_full = v)} />
                { t(K::HideFull) }
            </label>
            <label class="check">
                <input id="filter-hide-empty" type="checkbox" checked={q.hide_empty}
                    onchange={change(|q, v| q.hide_empty = v)} />
                { t(K::HideEmpty) }
            </label>
            <label class="check">
                <input id="filter-favourites" type="checkbox" checked={q.favourites_only}
                    onchange={change(|q, v| q.favourites_only = v)} />
                { t(K::FavouritesOnly) }
            </label>
            if lobby {
                <label class="select">
                    <span>{ t(K::Mode) }</span>
                    <select id="filter-mode" onchange={on_mode}>
                        <option value="" selected={q.mode.is_none()}>{ t(K::Any) }</option>
                        { for [GameplayMode::StandardA, GameplayMode::StandardAB].into_iter().map(|m| {
                            let v = m.to_wire().to_string();
                            html! { <option value={v.clone()} selected={mode_value == v}>{ m.label() }</option> }
                        }) }
                    </select>
                </label>
            }
        </div>
    }
}
