//! The lobby's web front end (Yew, client-side rendered): the live server
//! list at `/`, admin test servers at `/admin` and an embeddable list at
//! `/embed`, all talking to the bridge's `/ws`.
//!
//! Pure logic (`query`, `listing`, `games`, `state`, `test_servers`, and in
//! `services::connection` the decoder, the list feed, backoff and polling)
//! compiles and is tested natively; the rest needs a browser.

pub mod app;
pub mod components;
pub mod context;
pub mod games;
pub mod keyed_rows;
pub mod listing;
pub mod pages;
pub mod query;
pub mod services;
pub mod state;
pub mod test_server_context;
pub mod test_servers;

/// Mounts the app on `<body>`.
pub fn start() {
    yew::Renderer::<app::App>::new().render();
}
