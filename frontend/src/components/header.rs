//! The site header: brand, navigation and the status pill.

use yew::prelude::*;

use crate::{
    components::status_pill::StatusPill,
    contexts::settings::{use_settings, SettingsHandle},
    i18n::{t, Lang, K},
    route::Route,
    router::{link, use_router},
};

/// English or German; the choice is kept in localStorage. A plain
/// function, not a component: one less component in the bundle.
fn lang_switch(settings: &SettingsHandle) -> Html {
    let onchange = {
        let settings = settings.clone();
        Callback::from(move |e: Event| {
            let v = e
                .target_unchecked_into::<web_sys::HtmlSelectElement>()
                .value();
            if let Some(l) = Lang::parse(&v) {
                settings.set_lang(l);
            }
        })
    };
    html! {
        <label class="lang">
            <span class="visually-hidden">{ t(K::Language) }</span>
            <select id="lang" {onchange}>
                { for Lang::ALL.into_iter().map(|l| html! {
                    <option value={l.code()} selected={l == settings.lang}>{ l.name() }</option>
                }) }
            </select>
        </label>
    }
}

/// Navigation chrome for the full pages (the embed has none).
#[component]
pub fn Header() -> Html {
    let router = use_router();
    let route = router.location.route();
    let settings = use_settings();
    let active = |r: Route| classes!((route == r).then_some("active"));
    html! {
        <header class="site-header">
            { link(&router, Route::Home, classes!("brand"), html! {
                <><span class="brand-mark" aria-hidden="true">{"◆"}</span>{" Lobby"}</>
            }) }
            <nav aria-label={t(K::MainNav)}>
                { link(&router, Route::Home, active(Route::Home), html! { t(K::ServersNav) }) }
                { link(&router, Route::Admin, active(Route::Admin), html! { t(K::Admin) }) }
            </nav>
            { lang_switch(&settings) }
            <StatusPill />
        </header>
    }
}
