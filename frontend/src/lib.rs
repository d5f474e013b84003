//! The lobby's web front end (Yew, client-side rendered): the live server
//! list at `/`, admin test servers at `/admin` and an embeddable list at
//! `/embed`, all talking to the bridge's `/ws`.
//!
//! Pure logic (`query`, `listing`, `games`, `incoming`, `backoff`, `polling`, `state`,
//! `test_servers`) compiles and is tested natively; the rest needs a browser.

pub mod app;
pub mod backoff;
pub mod bridge_choice;
pub mod components;
pub mod context;
pub mod games;
pub mod incoming;
pub mod listing;
pub mod pages;
pub mod polling;
pub mod query;
pub mod services;
pub mod state;
pub mod test_server_context;
pub mod test_servers;

/// Takes a sign-in link's token, then mounts the app on `<body>`.
pub fn start() {
    // Before anything reads the token from storage.
    services::browser::take_fragment_token();
    yew::Renderer::<app::App>::new().render();
}
