//! The tab's test servers as an app-level context: one WebSocket per test
//! server, owned here rather than by the admin page, so moving between
//! pages inside the app keeps them registered; they end with the tab.
//! What each socket sends and shows is decided by its [`Flow`]; this is
//! the glue (sockets, timers, storage, dispatch).

use std::{cell::RefCell, collections::HashMap, rc::Rc};

use gloo_timers::future::TimeoutFuture;
use protocol::{Command, Registration};
use wasm_bindgen_futures::spawn_local;
use yew::prelude::*;

use super::{
    flow::{removed, Effect, Flow, RETRY_MS},
    storage::{load, save},
    TestServerDef, TestServers, TsAction,
};
use crate::{
    contexts::lobby::use_lobby,
    services::{
        browser,
        connection::{ConnEvent, Connection},
        storage,
    },
    state::Auth,
};

/// What the context shares: the test servers' state and their actions.
#[derive(Clone, PartialEq)]
pub struct TestServersHandle {
    pub state: UseReducerHandle<TestServers>,
}

impl TestServersHandle {
    /// Starts the tab's test servers (the admin page calls it on mount).
    pub fn activate(&self) {
        self.state.dispatch(TsAction::Activate);
    }

    /// Adds the server the form validated.
    pub fn add(&self, reg: Registration) {
        self.state.dispatch(TsAction::Add(reg));
    }

    pub fn add_samples(&self) {
        self.state.dispatch(TsAction::AddSamples);
    }

    /// New stats for a server; they go out at once while it is registered.
    pub fn update(&self, def: TestServerDef) {
        self.state.dispatch(TsAction::Update(def));
    }

    /// Unregisters the server and closes its connection.
    pub fn remove(&self, id: u64) {
        self.state.dispatch(TsAction::Remove(id));
    }

    pub fn remove_all(&self) {
        self.state.dispatch(TsAction::RemoveAll);
    }
}

/// One server's connection and what went out on it.
#[derive(Default)]
struct Runtime {
    conn: Option<Connection>,
    flow: Flow,
    /// Numbers the retry timers: only the latest one may fire.
    retry_timer: u32,
}

impl Runtime {
    /// Runs `step` on the flow with this socket's `send`.
    fn step<T>(&mut self, step: impl FnOnce(&mut Flow, &mut dyn FnMut(String) -> bool) -> T) -> T {
        let Runtime { conn, flow, .. } = self;
        step(flow, &mut |frame| {
            conn.as_ref().is_some_and(|c| c.send(frame))
        })
    }
}

type Runtimes = HashMap<u64, Rc<RefCell<Runtime>>>;
type Defs = Rc<RefCell<Vec<TestServerDef>>>;

/// Props of [`TestServersProvider`].
#[derive(Properties, PartialEq)]
pub struct TestServersProviderProps {
    #[prop_or_default]
    pub children: Html,
}

/// Runs `step` on server `id`'s flow with its latest definition, then
/// carries out the effects (after every borrow is released, since a
/// dispatch may render).
fn drive(
    id: u64,
    cell: &Rc<RefCell<Runtime>>,
    latest: &Defs,
    dispatcher: &UseReducerDispatcher<TestServers>,
    step: impl FnOnce(&mut Flow, Option<&TestServerDef>, &mut dyn FnMut(String) -> bool) -> Vec<Effect>,
) {
    let effects = {
        let defs = latest.borrow();
        let def = defs.iter().find(|d| d.id == id);
        cell.borrow_mut().step(|flow, send| step(flow, def, send))
    };
    apply(id, effects, cell, latest, dispatcher);
}

/// Carries out what server `id`'s flow asked for.
fn apply(
    id: u64,
    effects: Vec<Effect>,
    cell: &Rc<RefCell<Runtime>>,
    latest: &Defs,
    dispatcher: &UseReducerDispatcher<TestServers>,
) {
    for effect in effects {
        match effect {
            Effect::Phase(p) => dispatcher.dispatch(TsAction::Phase(id, p)),
            Effect::Registered => {
                dispatcher.dispatch(TsAction::Registered(id, browser::perf_now()))
            }
            Effect::Listed => dispatcher.dispatch(TsAction::Listed(id)),
            Effect::BridgeError(m) => dispatcher.dispatch(TsAction::BridgeError(id, m)),
            Effect::RetryLater => {
                let timer = {
                    let mut rt = cell.borrow_mut();
                    rt.retry_timer = rt.retry_timer.wrapping_add(1);
                    rt.retry_timer
                };
                let weak = Rc::downgrade(cell);
                let latest = Rc::clone(latest);
                let dispatcher = dispatcher.clone();
                spawn_local(async move {
                    TimeoutFuture::new(RETRY_MS).await;
                    let Some(cell) = weak.upgrade() else { return };
                    if cell.borrow().retry_timer != timer {
                        return;
                    }
                    drive(id, &cell, &latest, &dispatcher, |flow, def, send| {
                        flow.on_retry(def, send)
                    });
                });
            }
        }
    }
}

/// Opens a socket for server `id`, its events driving the server's [`Flow`].
fn start(
    id: u64,
    latest: Defs,
    dispatcher: UseReducerDispatcher<TestServers>,
) -> Rc<RefCell<Runtime>> {
    let runtime = Rc::new(RefCell::new(Runtime::default()));
    let weak = Rc::downgrade(&runtime);
    let on_event = Callback::from(move |ev: ConnEvent| {
        let Some(cell) = weak.upgrade() else { return };
        drive(id, &cell, &latest, &dispatcher, |flow, def, send| {
            flow.on_event(ev, def, storage::token, send)
        });
    });
    // It carries the token: always the bridge that served the page, never
    // one a link named.
    let conn = Connection::start(browser::own_bridge_url(), false, on_event);
    runtime.borrow_mut().conn = Some(conn);
    runtime
}

/// Brings the sockets in line with the definitions: opens one for each new
/// server, unregisters and closes removed ones, sends changed stats.
fn reconcile(
    runtimes: &RefCell<Runtimes>,
    defs: &[TestServerDef],
    latest: &Defs,
    dispatcher: &UseReducerDispatcher<TestServers>,
) {
    let mut map = runtimes.borrow_mut();
    for id in removed(map.keys().copied(), defs) {
        let conn = map.remove(&id).and_then(|rt| rt.borrow().conn.clone());
        if let Some(c) = conn {
            c.send(Command::Unregister.to_json());
            c.close();
        }
    }
    for def in defs {
        match map.get(&def.id) {
            None => {
                let rt = start(def.id, Rc::clone(latest), dispatcher.clone());
                map.insert(def.id, rt);
            }
            Some(rt) => rt
                .borrow_mut()
                .step(|flow, send| flow.update_stats(def, send)),
        }
    }
}

/// Holds the tab's test servers and their sockets; place it inside
/// [`super::lobby::LobbyProvider`] (it retries refused sign-ins when the
/// page signs in).
#[component]
pub fn TestServersProvider(props: &TestServersProviderProps) -> Html {
    let lobby = use_lobby();
    let state = use_reducer(|| {
        // An embed never runs test servers by itself; a tab that holds a
        // token (a reload of a signed-in tab) runs them on every page.
        let active = storage::token().is_some() && !browser::path().starts_with("/embed");
        TestServers::new(load(), active)
    });
    let latest = use_mut_ref(Vec::new);
    latest.borrow_mut().clone_from(&state.defs);
    let runtimes = use_mut_ref(Runtimes::new);

    use_effect_with(state.defs.clone(), |defs| save(defs));
    {
        let runtimes = runtimes.clone();
        let latest = latest.clone();
        let dispatcher = state.dispatcher();
        use_effect_with((state.active, state.defs.clone()), move |(active, defs)| {
            if *active {
                reconcile(&runtimes, defs, &latest, &dispatcher);
            }
        });
    }
    // Each server's flow decides whether it signs in again once the page's
    // own connection signs in (it was refused, or had no token).
    {
        let runtimes = runtimes.clone();
        let latest = latest.clone();
        let dispatcher = state.dispatcher();
        use_effect_with(lobby.state.auth == Auth::SignedIn, move |signed_in| {
            let token = storage::token().filter(|_| *signed_in);
            if let Some(token) = token {
                let running: Vec<_> = runtimes
                    .borrow()
                    .iter()
                    .map(|(id, rt)| (*id, Rc::clone(rt)))
                    .collect();
                for (id, cell) in running {
                    drive(id, &cell, &latest, &dispatcher, |flow, _, send| {
                        flow.on_page_signed_in(&token, send)
                    });
                }
            }
        });
    }
    {
        let runtimes = runtimes.clone();
        use_effect_with((), move |_| {
            move || {
                for (_, rt) in runtimes.borrow_mut().drain() {
                    if let Some(c) = rt.borrow().conn.as_ref() {
                        c.close();
                    }
                }
            }
        });
    }

    html! {
        <ContextProvider<TestServersHandle> context={TestServersHandle { state }}>
            { props.children.clone() }
        </ContextProvider<TestServersHandle>>
    }
}

/// The test-server context; panics only when used outside
/// [`TestServersProvider`], which is a programming error.
#[hook]
pub fn use_test_servers() -> TestServersHandle {
    use_context::<TestServersHandle>().expect("use_test_servers outside TestServersProvider")
}
