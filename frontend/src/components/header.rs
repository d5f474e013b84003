//! The site header: brand, navigation and the status pill.

use yew::prelude::*;
use yew_router::prelude::*;

use crate::{
    app::Route,
    components::status_pill::StatusPill,
    i18n::{t, Lang, K},
    marks_context::{set_lang, use_marks, MarksHandle},
};

/// English or German; the choice is kept in localStorage. A plain
/// function, not a component: one less component in the bundle.
fn lang_switch(marks: &MarksHandle) -> Html {
    let onchange = {
        let marks = marks.clone();
        Callback::from(move |e: Event| {
            let v = e
                .target_unchecked_into::<web_sys::HtmlSelectElement>()
                .value();
            if let Some(l) = Lang::parse(&v) {
                set_lang(&marks, l);
            }
        })
    };
    html! {
        <label class="lang">
            <span class="visually-hidden">{ t(K::Language) }</span>
            <select id="lang" {onchange}>
                { for Lang::ALL.into_iter().map(|l| html! {
                    <option value={l.code()} selected={l == marks.lang}>{ l.name() }</option>
                }) }
            </select>
        </label>
    }
}

/// Navigation chrome for the full pages (the embed has none).
#[component]
pub fn Header() -> Html {
    let route = use_route::<Route>();
    let marks = use_marks();
    let current = |r: Route| {
        if route.as_ref() == Some(&r) {
            Some("page")
        } else {
            None
        }
    };
    html! {
        <header class="site-header">
            <Link<Route> to={Route::Home} classes="brand">
                <span class="brand-mark" aria-hidden="true">{"◆"}</span>{" Lobby"}
            </Link<Route>>
            <nav aria-label={t(K::MainNav)}>
                <Link<Route> to={Route::Home} classes={classes!(current(Route::Home).map(|_| "active"))}>
                    { t(K::ServersNav) }
                </Link<Route>>
                <Link<Route> to={Route::Admin} classes={classes!(current(Route::Admin).map(|_| "active"))}>
                    { t(K::Admin) }
                </Link<Route>>
            </nav>
            { lang_switch(&marks) }
            <StatusPill />
        </header>
    }
}
