//! The bridge choice and the sign-in link in headless Chromium
//! (wasm-bindgen-test): which `?bridge=` the page takes from its real
//! location and `<meta name="lobby-bridges">`, and that a `#token=`
//! fragment lands in sessionStorage and leaves the address bar.
#![cfg(target_arch = "wasm32")]

use frontend::{
    bridge_choice,
    services::{browser, storage},
};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

fn window() -> web_sys::Window {
    web_sys::window().expect("a window")
}

/// Moves the page to `url` (same origin) without loading it.
fn go(url: &str) {
    window()
        .history()
        .expect("history")
        .replace_state_with_url(&JsValue::NULL, "", Some(url))
        .expect("replaceState");
}

fn host() -> String {
    window().location().host().expect("host")
}

#[wasm_bindgen_test]
fn own_bridge_is_ws_on_the_page_origin() {
    go("/");
    let own = format!("ws://{}/ws", host());
    assert_eq!(browser::own_bridge_url(), own);
    assert_eq!(browser::bridge_url(), own);
    assert!(browser::bridge_is_own());
}

#[wasm_bindgen_test]
fn only_allowed_or_loopback_bridges_are_taken_from_the_link() {
    // The test runner serves the page from loopback.
    assert!(host().starts_with("127.0.0.1:"), "{}", host());
    go("/?bridge=ws%3A%2F%2F127.0.0.1%3A9%2Fws");
    assert_eq!(browser::bridge_url(), "ws://127.0.0.1:9/ws");
    assert!(!browser::bridge_is_own());

    let evil = "/?bridge=wss%3A%2F%2Fevil.example%2Fws";
    go(evil);
    assert_eq!(browser::bridge_url(), browser::own_bridge_url());
    assert!(browser::bridge_is_own());

    let document = window().document().expect("document");
    let meta = document.create_element("meta").expect("meta");
    meta.set_attribute("name", "lobby-bridges").expect("name");
    meta.set_attribute("content", "wss://a.example/ws wss://evil.example/ws")
        .expect("content");
    document
        .query_selector("head")
        .ok()
        .flatten()
        .expect("head")
        .append_child(&meta)
        .expect("append");
    assert_eq!(browser::bridge_url(), "wss://evil.example/ws");
    assert!(!browser::bridge_is_own());
    meta.remove();
    go("/");
}

#[wasm_bindgen_test]
fn the_fragment_token_is_kept_and_removed_from_the_address_bar() {
    go("/admin?x=1#token=0a1b%20c");
    browser::take_fragment_token();
    assert_eq!(storage::token().as_deref(), Some("0a1b c"));
    let location = window().location();
    assert_eq!(location.hash().expect("hash"), "");
    assert_eq!(location.pathname().expect("path"), "/admin");
    assert_eq!(location.search().expect("search"), "?x=1");
    go("/");
}

#[wasm_bindgen_test]
fn pure_choice_in_the_browser() {
    let own = "wss://lobby.example/ws";
    assert_eq!(
        bridge_choice::choose(
            Some("ws://127.0.0.1@evil.example/ws"),
            own,
            "127.0.0.1:80",
            ""
        ),
        own
    );
    assert_eq!(bridge_choice::fragment_token("#token=t"), Some("t"));
}
