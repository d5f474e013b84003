//! Component tests in headless Chromium (wasm-bindgen-test): the list
//! renders rows, a heading click re-sorts, filters hide rows, and the add
//! form shows the protocol crate's message next to the field, and the
//! player's app loaded at `/admin` does not load it again.
#![cfg(target_arch = "wasm32")]

use crate::common;

use common::{feed, until, Mounted};
use frontend::{
    components::server_browser::ServerBrowser,
    contexts::lobby::Lobby,
    contexts::settings::SettingsProvider,
    router::RouterProvider,
    services::connection::ListMessage,
    state::{Action, State},
    test_servers::add_form::AddServerForm,
    views::table::{use_rows_drawn, FIRST_ROWS, MORE_ROWS},
};
use protocol::{GameplayMode, Players, ServerEntry, Stats};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement, HtmlInputElement};
use yew::prelude::*;

fn entry(name: &str, current: u32, max: u8, open: bool, mode: u64) -> ServerEntry {
    ServerEntry {
        registrant: None,
        name: name.into(),
        address: Some("192.0.2.1".into()),
        port: Some(20000 + current as u16),
        stats: Stats {
            players: Players { current, max },
            is_lobby_open: open,
            gameplay_mode: GameplayMode::from_wire(mode).unwrap_or(GameplayMode::StandardA),
        },
    }
}

/// The server browser over `state`, a lobby the test feeds instead of a
/// connection, inside the providers the page gives it.
fn server_browser(state: UseReducerHandle<State>) -> Html {
    html! {
        <RouterProvider>
            <ContextProvider<Lobby> context={Lobby::detached(state)}>
                <SettingsProvider>
                    <ServerBrowser />
                </SettingsProvider>
            </ContextProvider<Lobby>>
        </RouterProvider>
    }
}

/// Gives `state` the whole list `entries`, as a connection would.
fn feed_whole(state: &UseReducerHandle<State>, entries: Vec<ServerEntry>) {
    feed(state, ListMessage::Whole(entries));
}

/// Props of [`FedLobby`].
#[derive(Properties, PartialEq, Default)]
struct FedLobbyProps {
    /// Servers "more 00", "more 01", … listed after the three fixed ones.
    #[prop_or_default]
    more: usize,
}

/// Provides a lobby fed with a fixed list instead of a connection.
#[component]
fn FedLobby(props: &FedLobbyProps) -> Html {
    let state = use_reducer(State::default);
    {
        let state = state.clone();
        let more = props.more;
        use_effect_with((), move |_| {
            let mut entries = vec![
                entry("bravo", 1, 4, true, 1),
                entry("轰炸机人", 22, 4, false, 2),
                entry("Server von Bösewicht", 3, 3, true, 1),
            ];
            entries.extend((0..more).map(|i| entry(&format!("more {i:02}"), 0, 4, true, 1)));
            state.dispatch(Action::Opened);
            feed_whole(&state, entries);
        });
    }
    server_browser(state)
}

/// Waits until the rows are `expected`, in order.
async fn until_rows(root: &Element, expected: &[&str]) {
    until(&format!("rows {expected:?}"), || {
        row_names(root) == expected
    })
    .await;
}

fn exists(root: &Element, selector: &str) -> bool {
    root.query_selector(selector).ok().flatten().is_some()
}

fn row_names(root: &Element) -> Vec<String> {
    let rows = root.query_selector_all("[data-testid=server-row]").unwrap();
    (0..rows.length())
        .filter_map(|i| rows.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .filter_map(|e| e.get_attribute("data-name"))
        .collect()
}

fn click(root: &Element, selector: &str) {
    root.query_selector(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("no {selector}"))
        .dyn_into::<HtmlElement>()
        .unwrap()
        .click();
}

/// A bare `/` and no stored settings (the page applies the last used
/// filters on a bare `/`, and the tests share one page).
fn reset_url() {
    if let Ok(Some(storage)) = gloo_utils::window().local_storage() {
        let _ = storage.clear();
    }
    let history = gloo_utils::window().history().unwrap();
    history
        .replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some("/"))
        .unwrap();
}

#[wasm_bindgen_test]
async fn list_renders_rows_summary_and_unicode() {
    reset_url();
    let mounted = Mounted::<FedLobby>::new();
    let root = mounted.root.clone();
    until_rows(&root, &["bravo", "Server von Bösewicht", "轰炸机人"]).await;
    let summary = root
        .query_selector("[data-testid=summary]")
        .unwrap()
        .unwrap()
        .text_content()
        .unwrap_or_default();
    assert_eq!(summary, "3 servers · 26 players · 2 open");
    let text = root.text_content().unwrap_or_default();
    assert!(text.contains("4/4 +18 queued"), "{text}");
    assert!(text.contains("3/3 full"), "{text}");
    // Metrics for benchmarks are recorded after the render.
    let list_size = || {
        let metrics = js_sys::Reflect::get(&gloo_utils::window(), &"__lobbyMetrics".into()).ok()?;
        js_sys::Reflect::get(&metrics, &"lastListSize".into())
            .ok()?
            .as_f64()
    };
    until("render metrics", || list_size() == Some(3.0)).await;
}

/// `window.__lobbyMetrics.lastListSize`, once recorded.
fn metrics_list_size() -> Option<f64> {
    let metrics = js_sys::Reflect::get(&gloo_utils::window(), &"__lobbyMetrics".into()).ok()?;
    js_sys::Reflect::get(&metrics, &"lastListSize".into())
        .ok()?
        .as_f64()
}

/// A long list's rows come a few at a time, but all of them come; the
/// table says it is busy until then, and the render metrics are recorded
/// only once the last row is drawn.
#[wasm_bindgen_test]
async fn a_long_list_is_drawn_whole() {
    reset_url();
    let mounted = Mounted::<FedLobby>::with_props(FedLobbyProps { more: 40 });
    let root = mounted.root.clone();
    until("43 rows", || row_names(&root).len() == 43).await;
    until("the table no longer busy", || {
        !exists(&root, "table[aria-busy]")
    })
    .await;
    until("render metrics", || metrics_list_size() == Some(43.0)).await;
    let names = row_names(&root);
    assert_eq!(names.first().map(String::as_str), Some("bravo"));
    assert_eq!(names.last().map(String::as_str), Some("轰炸机人"));
}

/// Props of [`Drawn`].
#[derive(Properties, PartialEq)]
struct DrawnProps {
    total: usize,
    /// Every count the hook gave, in render order.
    seen: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
}

/// Notes what [`use_rows_drawn`] gives on each render.
#[component]
fn Drawn(props: &DrawnProps) -> Html {
    let drawn = use_rows_drawn(props.total);
    props.seen.borrow_mut().push(drawn);
    html! {}
}

/// The first screen's rows at once, then more per render (at least the
/// fewest, at most the most) until every row is drawn.
#[wasm_bindgen_test]
async fn rows_are_drawn_in_slices() {
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let (fewest, most) = MORE_ROWS;
    let total = FIRST_ROWS + fewest + most + 1;
    let _mounted = Mounted::<Drawn>::with_props(DrawnProps {
        total,
        seen: seen.clone(),
    });
    until("every row drawn", || seen.borrow().last() == Some(&total)).await;
    let mut counts = seen.borrow().clone();
    counts.dedup();
    assert_eq!(counts.first(), Some(&FIRST_ROWS), "{counts:?}");
    assert_eq!(counts.get(1), Some(&(FIRST_ROWS + fewest)), "{counts:?}");
    assert!(counts.len() >= 4, "{counts:?}");
    for step in counts.windows(2) {
        let added = step[1] - step[0];
        assert!(
            added <= most && (added >= fewest || step[1] == total),
            "{counts:?}"
        );
    }
}

#[wasm_bindgen_test]
async fn a_starred_row_is_pinned_and_a_hidden_one_counted() {
    reset_url();
    let mounted = Mounted::<FedLobby>::new();
    let root = mounted.root.clone();
    until_rows(&root, &["bravo", "Server von Bösewicht", "轰炸机人"]).await;
    click(&root, "[data-name=\"轰炸机人\"] [data-testid=star]");
    until_rows(&root, &["轰炸机人", "bravo", "Server von Bösewicht"]).await;
    // Pinned whatever the sort.
    click(&root, "th[data-sort=name] button");
    until_rows(&root, &["轰炸机人", "Server von Bösewicht", "bravo"]).await;
    click(&root, "[data-name=bravo] [data-testid=hide]");
    until_rows(&root, &["轰炸机人", "Server von Bösewicht"]).await;
    let hidden = || {
        root.query_selector("[data-testid=hidden]")
            .ok()
            .flatten()
            .and_then(|e| e.text_content())
            .unwrap_or_default()
    };
    until("the hidden count", || hidden().contains("1 hidden")).await;
    let stored = gloo_utils::window()
        .local_storage()
        .unwrap()
        .unwrap()
        .get_item("lobby.favourites")
        .unwrap()
        .unwrap_or_default();
    assert!(stored.starts_with("lobby-favourites-1\n"), "{stored:?}");
}

#[wasm_bindgen_test]
async fn a_stored_german_choice_renders_german() {
    reset_url();
    gloo_utils::window()
        .local_storage()
        .unwrap()
        .unwrap()
        .set_item("lobby.lang", "de")
        .unwrap();
    let mounted = Mounted::<FedLobby>::new();
    let root = mounted.root.clone();
    until_rows(&root, &["bravo", "Server von Bösewicht", "轰炸机人"]).await;
    let summary = || {
        root.query_selector("[data-testid=summary]")
            .ok()
            .flatten()
            .and_then(|e| e.text_content())
            .unwrap_or_default()
    };
    until("the German summary", || {
        summary() == "3 Server · 26 Spieler · 2 offen"
    })
    .await;
    let text = root.text_content().unwrap_or_default();
    assert!(text.contains("4/4 +18 wartend"), "{text}");
    assert!(text.contains("Nur Favoriten"), "{text}");
    frontend::i18n::set_lang(frontend::i18n::Lang::En);
}

#[wasm_bindgen_test]
async fn sort_click_reorders_and_sets_aria_sort() {
    reset_url();
    let mounted = Mounted::<FedLobby>::new();
    let root = mounted.root.clone();
    until_rows(&root, &["bravo", "Server von Bösewicht", "轰炸机人"]).await;
    click(&root, "th[data-sort=players] button");
    until_rows(&root, &["轰炸机人", "Server von Bösewicht", "bravo"]).await;
    let th = root
        .query_selector("th[data-sort=players]")
        .unwrap()
        .unwrap();
    assert_eq!(th.get_attribute("aria-sort").as_deref(), Some("descending"));
    let search = gloo_utils::window().location().search().unwrap();
    assert_eq!(search, "?sort=players");
    click(&root, "th[data-sort=players] button");
    until_rows(&root, &["bravo", "Server von Bösewicht", "轰炸机人"]).await;
    click(&root, "#filter-open");
    until_rows(&root, &["bravo", "Server von Bösewicht"]).await;
    assert!(gloo_utils::window()
        .location()
        .search()
        .unwrap()
        .contains("open=1"));
    reset_url();
}

#[component]
fn Form() -> Html {
    html! { <AddServerForm on_add={Callback::noop()} enabled=true /> }
}

fn type_into(root: &Element, selector: &str, value: &str) {
    let input: HtmlInputElement = root
        .query_selector(selector)
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap();
    input.set_value(value);
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    let event = web_sys::Event::new_with_event_init_dict("input", &init).unwrap();
    input.dispatch_event(&event).unwrap();
}

fn error_text(root: &Element, field: &str) -> Option<String> {
    root.query_selector(&format!("[data-testid=error-{field}]"))
        .unwrap()
        .and_then(|e| e.text_content())
}

#[wasm_bindgen_test]
async fn form_shows_protocol_messages_as_you_type() {
    let mounted = Mounted::<Form>::new();
    let root = mounted.root.clone();
    until("the form", || exists(&root, "#new-port")).await;
    assert_eq!(error_text(&root, "serverPort"), None);
    type_into(&root, "#new-port", "51963");
    until("the port message", || {
        error_text(&root, "serverPort").as_deref()
            == Some("port 51963 is reserved for the master server")
    })
    .await;
    type_into(&root, "#new-address", "1.2.3");
    until("the address message", || {
        error_text(&root, "serverAddress")
            .unwrap_or_default()
            .contains("not a valid one")
    })
    .await;
    type_into(&root, "#new-port", "20000");
    type_into(&root, "#new-name", "轰炸机人");
    until("the port message to go", || {
        error_text(&root, "serverPort").is_none()
    })
    .await;
    assert_eq!(error_text(&root, "serverName"), None);
    // A field emptied again shows its message.
    type_into(&root, "#new-name", "");
    until("the name message", || {
        error_text(&root, "serverName").as_deref() == Some("the server name must not be empty")
    })
    .await;
}

/// Feeds two lists in a row: "bravo" changes, the others do not.
#[component]
fn UpdatedLobby() -> Html {
    let state = use_reducer(State::default);
    {
        let state = state.clone();
        use_effect_with((), move |_| {
            state.dispatch(Action::Opened);
            for bravo in [1, 2] {
                feed_whole(
                    &state,
                    vec![entry("alpha", 0, 4, true, 1), {
                        let mut e = entry("bravo", 1, 4, true, 1);
                        e.stats.players.current = bravo;
                        e
                    }],
                );
            }
        });
    }
    server_browser(state)
}

#[wasm_bindgen_test]
async fn only_changed_rows_flash() {
    reset_url();
    let mounted = Mounted::<UpdatedLobby>::new();
    let root = mounted.root.clone();
    until_rows(&root, &["alpha", "bravo"]).await;
    let class = |name: &str| {
        root.query_selector(&format!("[data-testid=server-row][data-name={name}]"))
            .unwrap()
            .and_then(|e| e.get_attribute("class"))
            .unwrap_or_default()
    };
    assert!(class("bravo").starts_with("flash-"), "{}", class("bravo"));
    assert_eq!(class("alpha"), "");
}

/// The player's app, loaded at `/admin` (a server that answered the path
/// with it, not with the admin's bundle), says the page is not found
/// instead of having the browser load the path again, and again.
#[wasm_bindgen_test]
async fn the_players_app_loaded_at_admin_does_not_reload() {
    reset_url();
    let history = gloo_utils::window().history().unwrap();
    history
        .replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some("/admin"))
        .unwrap();
    let mounted = Mounted::<frontend::app::App>::new();
    let root = mounted.root.clone();
    until("the not-found page", || {
        root.query_selector("h1")
            .ok()
            .flatten()
            .and_then(|h| h.text_content())
            .is_some_and(|t| t == "Page not found")
    })
    .await;
    assert_eq!(
        gloo_utils::window().location().pathname().unwrap(),
        "/admin"
    );
    reset_url();
}
