//! "Notify me" as components in headless Chromium (wasm-bindgen-test):
//! a watch stored beside the favourites shows on the control; when the
//! list the page holds opens that server's lobby, the notify provider
//! shows one notice (a toast: the test browser has not allowed
//! notifications), tagged with the key and the event; "Turn off" empties
//! the stored watches.
#![cfg(target_arch = "wasm32")]

use crate::common;

use common::{feed, until, Mounted};
use frontend::{
    components::notify_me::NotifyMe,
    contexts::{lobby::Lobby, notify::NotifyProvider, settings::SettingsProvider},
    notify::watches::{watches_text, Watch},
    router::RouterProvider,
    services::connection::ListMessage,
    state::{Action, State},
};
use protocol::{
    delta::{Keyed, Snapshot},
    watch::Event,
    GameplayMode, Players, ServerEntry, ServerKey, Stats,
};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement};
use yew::prelude::*;

const KEY: ServerKey = ServerKey(7);

/// Gives `state` the list as a snapshot of one server, `Feuerland`, with
/// key [`KEY`], as a connection would.
fn snapshot(state: &UseReducerHandle<State>, seq: u64, open: bool) {
    let entry = ServerEntry {
        registrant: None,
        name: "Feuerland".into(),
        address: None,
        port: None,
        stats: Stats {
            players: Players { current: 1, max: 4 },
            is_lobby_open: open,
            gameplay_mode: GameplayMode::StandardA,
        },
    };
    let message = ListMessage::Snapshot(Snapshot {
        epoch: "e".into(),
        seq,
        servers: vec![Keyed {
            id: 1,
            key: Some(KEY),
            entry,
        }],
    });
    feed(state, message);
}

/// A lobby fed its list by the test: in game at first, open when
/// `#open` is clicked.
#[component]
fn Fed() -> Html {
    let state = use_reducer(State::default);
    {
        let state = state.clone();
        use_effect_with((), move |_| {
            state.dispatch(Action::Opened);
            snapshot(&state, 1, false);
        });
    }
    let open = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| snapshot(&state, 2, true))
    };
    // The notify provider starts with the first list (as a page does,
    // whose list arrives long before its first change).
    let listed = state.list.version() > 0;
    html! {
        <RouterProvider>
            <ContextProvider<Lobby> context={Lobby::detached(state)}>
                <SettingsProvider>
                    if listed {
                        <NotifyProvider>
                            <NotifyMe server={KEY} name="Feuerland" />
                            <button id="open" onclick={open}>{ "open" }</button>
                        </NotifyProvider>
                    }
                </SettingsProvider>
            </ContextProvider<Lobby>>
        </RouterProvider>
    }
}

fn find(root: &Element, selector: &str) -> Option<Element> {
    root.query_selector(selector).ok().flatten()
}

fn click(root: &Element, selector: &str) {
    find(root, selector)
        .unwrap_or_else(|| panic!("no {selector}"))
        .dyn_into::<HtmlElement>()
        .unwrap()
        .click();
}

fn stored() -> Option<String> {
    gloo_utils::window()
        .local_storage()
        .ok()
        .flatten()
        .and_then(|s| s.get_item("lobby.watches").ok().flatten())
}

#[wasm_bindgen_test]
async fn a_stored_watch_notices_its_event_once_and_turns_off() {
    let storage = gloo_utils::window().local_storage().unwrap().unwrap();
    storage.clear().unwrap();
    let watch = Watch::new(KEY, "Feuerland", &[Event::LobbyOpened], 0).unwrap();
    storage
        .set_item("lobby.watches", &watches_text(&[watch]))
        .unwrap();
    let mounted = Mounted::<Fed>::new();
    let root = mounted.root.clone();

    until("the stored watch", || {
        find(&root, "[data-testid=notify-summary]")
            .and_then(|e| e.text_content())
            .is_some_and(|t| t.contains("opens its lobby"))
    })
    .await;
    assert!(find(&root, "[data-testid=toast]").is_none(), "nothing yet");

    click(&root, "#open");
    until("a toast", || find(&root, "[data-testid=toast]").is_some()).await;
    let toast = find(&root, "[data-testid=toast]").unwrap();
    assert_eq!(
        toast.get_attribute("data-tag").as_deref(),
        Some("0000000000000007:lobby-opened")
    );
    let text = toast.text_content().unwrap_or_default();
    assert!(text.contains("The lobby is open, 1 of 4 players"), "{text}");
    assert_eq!(
        find(&root, "[data-testid=toasts]")
            .and_then(|e| e.get_attribute("role"))
            .as_deref(),
        Some("status")
    );

    click(&root, "[data-testid=notify-off]");
    until("the control off", || {
        find(&root, "[data-testid=notify-me]").is_some()
    })
    .await;
    assert_eq!(stored().as_deref(), Some("lobby-watches-1"));
}
