//! The tab's test servers as an app-level context: one WebSocket per test
//! server, owned here rather than by the admin page, so moving between
//! pages inside the app keeps them registered; they end with the tab.

use std::{cell::RefCell, collections::HashMap, rc::Rc};

use protocol::Stats;
use yew::prelude::*;

use crate::{
    context::use_lobby,
    incoming::Incoming,
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
    /// Registration sent on the current socket.
    registered: bool,
    /// The stats last sent on the current socket.
    sent: Option<Stats>,
}

type Runtimes = HashMap<u64, Rc<RefCell<Runtime>>>;

/// Props of [`TestServersProvider`].
#[derive(Properties, PartialEq)]
pub struct TestServersProviderProps {
    #[prop_or_default]
    pub children: Html,
}

/// Opens a socket for server `id`: signs in with the tab's token, then
/// registers and sends the stats, again after every reconnect.
fn start(
    id: u64,
    latest: Rc<RefCell<Vec<TestServerDef>>>,
    dispatcher: UseReducerDispatcher<TestServers>,
) -> Rc<RefCell<Runtime>> {
    let runtime = Rc::new(RefCell::new(Runtime::default()));
    let cell = Rc::clone(&runtime);
    let on_event = Callback::from(move |ev: ConnEvent| {
        let phase = |p: Phase| dispatcher.dispatch(TsAction::Phase(id, p));
        let conn = cell.borrow().conn.clone();
        let send = |text: String| conn.as_ref().is_some_and(|c| c.send(text));
        match ev {
            ConnEvent::Connecting => {
                cell.borrow_mut().registered = false;
                phase(Phase::Connecting);
            }
            ConnEvent::Opened => match storage::token() {
                Some(token) => {
                    send(auth_json(&token));
                    phase(Phase::SigningIn);
                }
                None => phase(Phase::NoToken),
            },
            ConnEvent::Message {
                msg: Incoming::AuthResult(true),
                ..
            } => {
                let Some(def) = latest.borrow().iter().find(|d| d.id == id).cloned() else {
                    return;
                };
                match def.register_json() {
                    Ok(register) => {
                        send(register);
                        send(def.stats_json());
                        let mut rt = cell.borrow_mut();
                        rt.registered = true;
                        rt.sent = Some(def.stats());
                        drop(rt);
                        phase(Phase::Registered);
                    }
                    Err(e) => phase(Phase::Invalid(e.to_string())),
                }
            }
            ConnEvent::Message {
                msg: Incoming::AuthResult(false),
                ..
            } => phase(Phase::Rejected),
            ConnEvent::Message {
                msg: Incoming::Error { message, .. },
                ..
            } => dispatcher.dispatch(TsAction::BridgeError(id, message)),
            ConnEvent::Closed { .. } => {
                cell.borrow_mut().registered = false;
                phase(Phase::Reconnecting);
            }
            _ => {}
        }
    });
    let conn = Connection::start(browser::bridge_url(), false, on_event);
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
/// [`crate::context::LobbyProvider`] (it retries refused sign-ins when the
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
