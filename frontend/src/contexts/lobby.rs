//! The lobby context: one bridge connection per page, its state, and the
//! `use_lobby` hook with the domain actions components need. What each
//! connection event does is decided in `state::events`; this is the glue.

use std::{cell::RefCell, rc::Rc};

use protocol::bridge::ClientMessage;
use yew::prelude::*;

use crate::{
    services::{
        browser,
        connection::{ConnEvent, Connection, Cursor},
        storage,
    },
    state::{events::react, Action, State},
};

/// What the context shares: the state and a way to talk to the bridge.
#[derive(Clone)]
pub struct Lobby {
    pub state: UseReducerHandle<State>,
    conn: Rc<RefCell<Option<Connection>>>,
}

impl PartialEq for Lobby {
    fn eq(&self, other: &Self) -> bool {
        self.state == other.state && Rc::ptr_eq(&self.conn, &other.conn)
    }
}

impl Lobby {
    /// A lobby over `state` without a connection: for component tests and
    /// previews that feed the state themselves.
    pub fn detached(state: UseReducerHandle<State>) -> Self {
        Lobby {
            state,
            conn: Rc::new(RefCell::new(None)),
        }
    }

    /// Keeps the token for this tab and asks the bridge to accept it; when
    /// the socket is down, it goes out as soon as the socket opens. Only
    /// the bridge that served the page ever gets it.
    pub fn sign_in(&self, token: &str) {
        if !browser::bridge_is_own() {
            return;
        }
        storage::set_token(token);
        self.state.dispatch(Action::AuthPending);
        if let Some(c) = self.conn.borrow().as_ref() {
            c.send(
                ClientMessage::Auth {
                    token: token.to_owned(),
                }
                .to_json(),
            );
        }
    }
}

/// Props of [`LobbyProvider`].
#[derive(Properties, PartialEq)]
pub struct LobbyProviderProps {
    #[prop_or_default]
    pub children: Html,
}

/// Opens the page's connection and provides [`Lobby`] to its children.
#[component]
pub fn LobbyProvider(props: &LobbyProviderProps) -> Html {
    let state = use_reducer(State::default);
    let conn = use_mut_ref(|| None::<Connection>);
    {
        let dispatcher = state.dispatcher();
        let conn = conn.clone();
        // Handles to the one store of the list: list messages apply to it,
        // and the connection asks it where the list stands whenever it
        // subscribes.
        let store = RefCell::new(state.list.clone());
        let cursor_store = state.list.clone();
        use_effect_with((), move |_| {
            let cell = conn.clone();
            let on_event = Callback::from(move |ev: ConnEvent| {
                // Never to a bridge named by the link (`?bridge=`).
                let token = || storage::token().filter(|_| browser::bridge_is_own());
                let reaction = react(ev, browser::now_ms(), &mut store.borrow_mut(), token);
                for action in reaction.actions {
                    dispatcher.dispatch(action);
                }
                if let Some(c) = cell.borrow().as_ref() {
                    if let Some(msg) = reaction.send {
                        c.send(msg.to_json());
                    }
                    // A list message did not apply: subscribe again from
                    // where the list stands.
                    if reaction.resubscribe {
                        c.resubscribe();
                    }
                }
            });
            let cursor = Cursor::new(move || cursor_store.resume());
            let c = Connection::lobby(browser::bridge_url(), browser::api_url(), cursor, on_event);
            *conn.borrow_mut() = Some(c.clone());
            move || c.close()
        });
    }
    let lobby = Lobby {
        state,
        conn: conn.clone(),
    };
    html! {
        <ContextProvider<Lobby> context={lobby}>
            { props.children.clone() }
        </ContextProvider<Lobby>>
    }
}

/// The lobby context; panics only when used outside [`LobbyProvider`],
/// which is a programming error, not a runtime condition.
#[hook]
pub fn use_lobby() -> Lobby {
    use_context::<Lobby>().expect("use_lobby outside LobbyProvider")
}
