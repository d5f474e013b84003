//! The site header: brand, navigation and the status pill.

use yew::prelude::*;
use yew_router::prelude::*;

use crate::{app::Route, components::status_pill::StatusPill};

/// Navigation chrome for the full pages (the embed has none).
#[component]
pub fn Header() -> Html {
    let route = use_route::<Route>();
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
            <nav aria-label="Main">
                <Link<Route> to={Route::Home} classes={classes!(current(Route::Home).map(|_| "active"))}>
                    {"Servers"}
                </Link<Route>>
                <Link<Route> to={Route::Admin} classes={classes!(current(Route::Admin).map(|_| "active"))}>
                    {"Admin"}
                </Link<Route>>
            </nav>
            <StatusPill />
        </header>
    }
}
