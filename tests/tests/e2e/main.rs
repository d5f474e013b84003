//! The end-to-end scenarios, one binary (each file a module) over the
//! harness in `src/`: the real `bridge` and `master` binaries, headless
//! Chromium, Firefox ESR, nginx and PostgreSQL. `.config/nextest.toml` runs
//! them one at a time.

mod a11y;
mod browser;
mod deltas;
mod deploy;
mod faults;
mod front_guard;
mod games;
mod join;
mod notify;
mod players;
mod polling;
mod screenshots;
mod server_page;
mod web_push;
mod webhooks;
