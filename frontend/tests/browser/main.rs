//! The front end's component tests, one binary (each file a module), run
//! in headless Chromium by wasm-bindgen-test-runner.

#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::wasm_bindgen_test_configure;

wasm_bindgen_test_configure!(run_in_browser);

mod bridge_choice;
mod common;
mod components;
mod history;
mod notify;
