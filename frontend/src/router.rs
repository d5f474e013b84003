//! A router for the app's pages: the path picks the page, the query
//! holds the list's view, `history.pushState` for links and
//! `replaceState` for view changes, `popstate` for Back and Forward.
//! Written by hand instead of yew-router, whose route recognizer and
//! history layer cost the bundle about 34 KB (before compression) for
//! what a few fixed paths and `/server/{key}` need.

use std::rc::Rc;

use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use yew::prelude::*;

use crate::route::Route;

/// Where the page is: its path and its query (without `?`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    pub path: String,
    pub query: String,
}

impl Location {
    /// The browser's current location.
    pub fn current() -> Location {
        let loc = web_sys::window().map(|w| w.location());
        let get = |f: fn(&web_sys::Location) -> Result<String, JsValue>| {
            loc.as_ref().and_then(|l| f(l).ok()).unwrap_or_default()
        };
        Location {
            path: get(web_sys::Location::pathname),
            query: get(web_sys::Location::search)
                .trim_start_matches('?')
                .to_owned(),
        }
    }

    pub fn route(&self) -> Route {
        Route::from_path(&self.path)
    }
}

/// The router's context: the location and a way to change it.
#[derive(Clone, PartialEq)]
pub struct Router {
    pub location: Rc<Location>,
    set: Callback<Location>,
}

impl Router {
    /// Goes to `route` (a new history entry, no reload).
    pub fn push(&self, route: Route) {
        self.go(&route.path(), "", true);
    }

    /// Replaces the query of the current page (no new history entry), so
    /// a link or a reload reproduces the view.
    pub fn replace_query(&self, query: &str) {
        let path = self.location.path.clone();
        self.go(&path, query, false);
    }

    fn go(&self, path: &str, query: &str, push: bool) {
        let url = if query.is_empty() {
            path.to_owned()
        } else {
            format!("{path}?{query}")
        };
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = if push {
                history.push_state_with_url(&JsValue::NULL, "", Some(&url))
            } else {
                history.replace_state_with_url(&JsValue::NULL, "", Some(&url))
            };
        }
        self.set.emit(Location {
            path: path.to_owned(),
            query: query.to_owned(),
        });
    }
}

/// Props of [`RouterProvider`].
#[derive(Properties, PartialEq)]
pub struct RouterProviderProps {
    #[prop_or_default]
    pub children: Html,
}

/// Provides [`Router`]; Back and Forward update it.
#[component]
pub fn RouterProvider(props: &RouterProviderProps) -> Html {
    let location = use_state(Location::current);
    {
        let location = location.clone();
        use_effect_with((), move |_| {
            let on_pop = Closure::<dyn Fn()>::new(move || location.set(Location::current()));
            let window = web_sys::window();
            if let Some(w) = &window {
                let _ =
                    w.add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
            }
            move || {
                if let Some(w) = &window {
                    let _ = w.remove_event_listener_with_callback(
                        "popstate",
                        on_pop.as_ref().unchecked_ref(),
                    );
                }
            }
        });
    }
    let router = Router {
        location: Rc::new((*location).clone()),
        set: {
            let location = location.clone();
            Callback::from(move |l: Location| location.set(l))
        },
    };
    html! {
        <ContextProvider<Router> context={router}>{ props.children.clone() }</ContextProvider<Router>>
    }
}

/// The router; outside [`RouterProvider`] (a programming error) it panics.
#[hook]
pub fn use_router() -> Router {
    use_context::<Router>().expect("use_router outside RouterProvider")
}

/// A link to `route` that changes the page without a reload (a click
/// with a modifier key opens it the browser's way).
pub fn link(router: &Router, route: Route, class: Classes, children: Html) -> Html {
    labelled_link(router, route, class, None, children)
}

/// [`link`] with an accessible name (and the same as a tooltip), for a
/// link whose content is a symbol.
pub fn labelled_link(
    router: &Router,
    route: Route,
    class: Classes,
    label: Option<String>,
    children: Html,
) -> Html {
    let onclick = {
        let router = router.clone();
        Callback::from(move |e: MouseEvent| {
            if e.ctrl_key() || e.meta_key() || e.shift_key() || e.alt_key() || e.button() != 0 {
                return;
            }
            e.prevent_default();
            router.push(route);
        })
    };
    html! { <a href={route.path()} class={class} aria-label={label.clone()} title={label} {onclick}>{ children }</a> }
}
