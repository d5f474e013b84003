//! The lobby's web front end (Yew, client-side rendered): the live server
//! list at `/`, admin test servers and webhooks at `/admin`, an embeddable list at
//! `/embed`, and a page per server at `/server/{key}` (with its history
//! and badge snippets), all talking to the bridge's `/ws`.
//!
//! Two bundles are built from it (two binaries, two Trunk builds): the
//! player's (`frontend`, [`start`]: every page but `/admin`) and the
//! admin's (`admin`, [`start_admin`]: every page), so players never
//! download the admin's test servers and webhooks.
//!
//! Pure logic (`query`, `list` with the lobby's rows and the one store of the
//! lobby's list, `games`, `history` and `graph` for the history graphs,
//! `snippets`, `state` with what the lobby's connection events
//! do to it, `settings`, `favourites`, `fresh`, `i18n`, `route`,
//! `tab_keys`, the test servers' model and flow in `test_servers`, the
//! webhook form's request in `webhooks::form`, and in
//! `services::connection` the decoder, the list's cursor, backoff and
//! polling) compiles and is tested natively; the rest needs a browser:
//! the providers (`contexts`, `test_servers::provider`), the view-model
//! hooks (`views`), `components` and `pages`.

pub mod app;
pub mod bridge_choice;
pub mod components;
pub mod contexts;
pub mod favourites;
pub mod fresh;
pub mod games;
pub mod graph;
pub mod history;
pub mod i18n;
pub mod list;
pub mod notify;
pub mod pages;
pub mod query;
pub mod route;
pub mod router;
pub mod services;
pub mod settings;
pub mod snippets;
pub mod state;
pub mod tab_keys;
pub mod test_servers;
pub mod views;
pub mod webhooks;
pub mod week;

/// The player's bundle: takes a sign-in link's token, then mounts the app
/// without the admin page on `<body>`.
pub fn start() {
    boot(|| {
        yew::Renderer::<app::App>::new().render();
    });
}

/// The admin's bundle: as [`start`], with the admin page and the test
/// servers.
pub fn start_admin() {
    boot(|| {
        yew::Renderer::<app::AdminApp>::new().render();
    });
}

/// Takes the token, then mounts with `render` in place of `index.html`'s
/// first screen once that has been shown.
fn boot(render: impl FnOnce() + 'static) {
    // Before anything reads the token from storage.
    services::browser::take_fragment_token();
    services::browser::after_first_paint(|| {
        services::browser::remove_boot_placeholder();
        render();
    });
}
