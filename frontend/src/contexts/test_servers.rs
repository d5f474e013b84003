//! The tab's test servers as an app-level context: one WebSocket per test
//! server, owned here rather than by the admin page, so moving between
//! pages inside the app keeps them registered; they end with the tab.

use std::{cell::RefCell, collections::HashMap, rc::Rc};

use gloo_timers::future::TimeoutFuture;
use protocol::{
    bridge::{ErrorCode, MasterState},
    Stats,
};
use wasm_bindgen_futures::spawn_local;
use yew::prelude::*;

use crate::{
    contexts::lobby::use_lobby,
    services::connection::decode::Incoming,
    services::{
        browser,
        connection::{ConnEvent, Connection},
        storage,
    },
    state::Auth,
    test_servers::{auth_json, unregister_json, Phase, TestServerDef, TestServers, TsAction},
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

    /// Adds a validated server from the form.
    pub fn add(&self, name: String, address: String, port: u16) {
        self.state.dispatch(TsAction::Add(name, address, port));
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
    /// `bridgeAuth` succeeded on the current socket.
    signed_in: bool,
    /// Registration sent on the current socket and not refused.
    registered: bool,
    /// The stats last sent on the current socket.
    sent: Option<Stats>,
    /// The current socket was told the master is down and not yet up again.
    master_down: bool,
    /// A registration the bridge refused with `master-down` is tried again
    /// after [`RETRY_MS`] even if no `bridgeStatus up` comes (when this
    /// socket never saw the master go down, it will not see it come back);
    /// bumping this cancels the pending try.
    retry_gen: u32,
}

type Runtimes = HashMap<u64, Rc<RefCell<Runtime>>>;

/// The fallback wait before registering again after a `master-down` refusal.
const RETRY_MS: u32 = 3000;

/// Props of [`TestServersProvider`].
#[derive(Properties, PartialEq)]
pub struct TestServersProviderProps {
    #[prop_or_default]
    pub children: Html,
}

/// Sends server `id`'s registration and its latest stats on its socket.
fn register(
    id: u64,
    cell: &RefCell<Runtime>,
    latest: &RefCell<Vec<TestServerDef>>,
    dispatcher: &UseReducerDispatcher<TestServers>,
) {
    let Some(def) = latest.borrow().iter().find(|d| d.id == id).cloned() else {
        return;
    };
    let register = match def.register_json() {
        Ok(register) => register,
        Err(e) => {
            dispatcher.dispatch(TsAction::Phase(id, Phase::Invalid(e.to_string())));
            return;
        }
    };
    let mut rt = cell.borrow_mut();
    rt.retry_gen = rt.retry_gen.wrapping_add(1);
    let sent = rt
        .conn
        .as_ref()
        .is_some_and(|c| c.send(register) && c.send(def.stats_json()));
    if sent {
        rt.registered = true;
        rt.sent = Some(def.stats());
        drop(rt);
        dispatcher.dispatch(TsAction::Registered(id, browser::perf_now()));
    }
}

/// Opens a socket for server `id`: signs in with the tab's token, then
/// registers and sends the stats, again after every reconnect and whenever
/// the master comes back after refusing it.
fn start(
    id: u64,
    latest: Rc<RefCell<Vec<TestServerDef>>>,
    dispatcher: UseReducerDispatcher<TestServers>,
) -> Rc<RefCell<Runtime>> {
    let runtime = Rc::new(RefCell::new(Runtime::default()));
    let weak = Rc::downgrade(&runtime);
    let on_event = Callback::from(move |ev: ConnEvent| {
        let Some(cell) = weak.upgrade() else { return };
        let phase = |p: Phase| dispatcher.dispatch(TsAction::Phase(id, p));
        match ev {
            ConnEvent::Connecting => {
                let mut rt = cell.borrow_mut();
                rt.signed_in = false;
                rt.registered = false;
                rt.master_down = false;
                rt.retry_gen = rt.retry_gen.wrapping_add(1);
                drop(rt);
                phase(Phase::Connecting);
            }
            ConnEvent::Opened => match storage::token() {
                Some(token) => {
                    let conn = cell.borrow().conn.clone();
                    conn.map(|c| c.send(auth_json(&token)));
                    phase(Phase::SigningIn);
                }
                None => phase(Phase::NoToken),
            },
            ConnEvent::Message {
                msg: Incoming::AuthResult(true),
                ..
            } => {
                let master_down = {
                    let mut rt = cell.borrow_mut();
                    rt.signed_in = true;
                    rt.master_down
                };
                if master_down {
                    phase(Phase::MasterDown);
                } else {
                    register(id, &cell, &latest, &dispatcher);
                }
            }
            ConnEvent::Message {
                msg: Incoming::AuthResult(false),
                ..
            } => phase(Phase::Rejected),
            ConnEvent::Message {
                msg: Incoming::Master(MasterState::Down),
                ..
            } => {
                let signed_in = {
                    let mut rt = cell.borrow_mut();
                    rt.master_down = true;
                    rt.signed_in
                };
                if signed_in {
                    phase(Phase::MasterDown);
                }
            }
            ConnEvent::Message {
                msg: Incoming::Master(MasterState::Up),
                ..
            } => {
                let (signed_in, registered) = {
                    let mut rt = cell.borrow_mut();
                    rt.master_down = false;
                    (rt.signed_in, rt.registered)
                };
                match (signed_in, registered) {
                    // A hung master kept the registration: it is back as is.
                    (true, true) => phase(Phase::Registered),
                    (true, false) => register(id, &cell, &latest, &dispatcher),
                    _ => {}
                }
            }
            ConnEvent::Message {
                msg:
                    Incoming::Error {
                        code: Some(ErrorCode::MasterDown),
                        message,
                    },
                ..
            } => {
                let retry = {
                    let mut rt = cell.borrow_mut();
                    rt.registered = false;
                    rt.retry_gen = rt.retry_gen.wrapping_add(1);
                    // While the bridge reports the master down, its "up" is
                    // the signal; the timer covers a socket that never
                    // heard "down".
                    (!rt.master_down).then_some(rt.retry_gen)
                };
                if let Some(gen) = retry {
                    let weak = Rc::downgrade(&cell);
                    let latest = Rc::clone(&latest);
                    let dispatcher = dispatcher.clone();
                    spawn_local(async move {
                        TimeoutFuture::new(RETRY_MS).await;
                        let Some(cell) = weak.upgrade() else { return };
                        let ready = {
                            let rt = cell.borrow();
                            rt.retry_gen == gen && rt.signed_in && !rt.registered
                        };
                        if ready {
                            register(id, &cell, &latest, &dispatcher);
                        }
                    });
                }
                dispatcher.dispatch(TsAction::BridgeError(id, message));
                phase(Phase::MasterDown);
            }
            ConnEvent::Message {
                msg: Incoming::Error { message, .. },
                ..
            } => dispatcher.dispatch(TsAction::BridgeError(id, message)),
            ConnEvent::Closed { .. } => {
                let mut rt = cell.borrow_mut();
                rt.signed_in = false;
                rt.registered = false;
                rt.retry_gen = rt.retry_gen.wrapping_add(1);
                drop(rt);
                phase(Phase::Reconnecting);
            }
            _ => {}
        }
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
    latest: &Rc<RefCell<Vec<TestServerDef>>>,
    dispatcher: &UseReducerDispatcher<TestServers>,
) {
    let mut map = runtimes.borrow_mut();
    map.retain(|id, rt| {
        let keep = defs.iter().any(|d| d.id == *id);
        if !keep {
            if let Some(c) = rt.borrow().conn.as_ref() {
                c.send(unregister_json());
                c.close();
            }
        }
        keep
    });
    for def in defs {
        match map.get(&def.id) {
            None => {
                let rt = start(def.id, Rc::clone(latest), dispatcher.clone());
                map.insert(def.id, rt);
            }
            Some(rt) => {
                let mut rt = rt.borrow_mut();
                let stats = def.stats();
                if rt.registered && rt.sent != Some(stats) {
                    let sent = rt.conn.as_ref().is_some_and(|c| c.send(def.stats_json()));
                    if sent {
                        rt.sent = Some(stats);
                    }
                }
            }
        }
    }
}

/// Holds the tab's test servers and their sockets; place it inside
/// [`crate::contexts::lobby::LobbyProvider`] (it retries refused sign-ins when the
/// page signs in).
#[component]
pub fn TestServersProvider(props: &TestServersProviderProps) -> Html {
    let lobby = use_lobby();
    let state = use_reducer(|| {
        // An embed never runs test servers by itself; a tab that holds a
        // token (a reload of a signed-in tab) runs them on every page.
        let active = storage::token().is_some() && !browser::path().starts_with("/embed");
        TestServers::new(storage::test_servers(), active)
    });
    let latest = use_mut_ref(Vec::new);
    latest.borrow_mut().clone_from(&state.defs);
    let runtimes = use_mut_ref(Runtimes::new);

    use_effect_with(state.defs.clone(), |defs| storage::set_test_servers(defs));
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
    // Servers that were refused (or had no token) retry once the page's
    // own connection signs in.
    {
        let runtimes = runtimes.clone();
        let phases = state.phases.clone();
        let dispatcher = state.dispatcher();
        use_effect_with(lobby.state.auth == Auth::SignedIn, move |signed_in| {
            let token = storage::token().filter(|_| *signed_in);
            if let Some(token) = token {
                for (id, rt) in runtimes.borrow().iter() {
                    let refused = matches!(phases.get(id), Some(Phase::Rejected | Phase::NoToken));
                    let conn = rt.borrow().conn.clone();
                    if refused && conn.is_some_and(|c| c.send(auth_json(&token))) {
                        dispatcher.dispatch(TsAction::Phase(*id, Phase::SigningIn));
                    }
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
