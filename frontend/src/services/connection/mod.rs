//! The bridge connection: a WebSocket that keeps itself alive (`socket`,
//! with the `backoff` schedule), reads frames (`decode`), falls back to
//! polling when pushes do not arrive (`polling`) and, for the lobby, hands
//! the page its list: the first snapshot from `/api/servers` (`fetch`),
//! then deltas on the socket, subscribing from where the page's list
//! stands (`cursor`, which asks the page's store). Everything is reported through a `Callback`; render timing
//! for benchmarks goes to `services::metrics`.

pub mod backoff;
pub mod cursor;
pub mod decode;
mod fetch;
pub mod polling;
mod socket;

use std::{
    cell::{Cell, RefCell},
    rc::Rc,
};

use futures_channel::mpsc;
use wasm_bindgen_futures::spawn_local;
use yew::Callback;

pub use self::cursor::Cursor;
use self::decode::Incoming;
pub use self::decode::ListMessage;

/// What happens on the connection.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnEvent {
    Connecting,
    /// The socket is open; `send` works from now on (also inside the callback).
    Opened,
    /// A parsed message other than the list; `perf_ms` is
    /// `performance.now()` when its frame arrived, before parsing.
    Message {
        msg: Incoming,
        perf_ms: f64,
    },
    /// A lobby list message: `perf_ms` is `performance.now()` when its
    /// frame or response arrived.
    List {
        message: ListMessage,
        perf_ms: f64,
    },
    /// Pushes did not come within the grace period; polling started.
    Polling,
    /// A push arrived while polling, so polling stopped.
    PushesResumed,
    /// The socket closed; the next attempt starts at `retry_at_ms` (Date.now()).
    Closed {
        retry_at_ms: f64,
    },
}

enum Out {
    Text(String),
    /// Subscribe to the list now, from where the page's list stands;
    /// pushes are awaited from here on.
    Subscribe,
    /// Subscribe again on the same socket: the page's list did not take a
    /// message.
    Resubscribe,
    Close,
}

/// The lobby's part of a connection: how to ask where its list stands and
/// how it was first loaded.
struct ListLink {
    cursor: Cursor,
    /// The first snapshot is being fetched over HTTP: a socket that opens
    /// meanwhile waits for it before subscribing, so it carries only what
    /// changed after it.
    fetching: Cell<bool>,
}

struct Inner {
    tx: RefCell<Option<mpsc::UnboundedSender<Out>>>,
    stopped: Cell<bool>,
    /// Whether to poll when pushes do not arrive.
    poll_fallback: bool,
    /// `None`: a plain socket (a test server's), which never subscribes.
    lobby: Option<ListLink>,
}

/// A handle to a self-reconnecting socket; clones share it.
#[derive(Clone)]
pub struct Connection {
    inner: Rc<Inner>,
}

impl PartialEq for Connection {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Connection {
    /// Starts connecting to `url` in the background. With `poll_fallback`,
    /// the socket sends `msQueryGameServers` every 2 s when no list arrived
    /// within 3 s of opening, until a push arrives (see `polling`).
    pub fn start(url: String, poll_fallback: bool, on_event: Callback<ConnEvent>) -> Self {
        Self::launch(url, poll_fallback, None, None, on_event)
    }

    /// The lobby's connection: fetches the first snapshot from `api_url`
    /// (when given) while the socket opens, subscribes to deltas from where
    /// `cursor` says the page's list stands, keeps the list current and
    /// polls when pushes do not come.
    pub fn lobby(
        url: String,
        api_url: Option<String>,
        cursor: Cursor,
        on_event: Callback<ConnEvent>,
    ) -> Self {
        let lobby = ListLink {
            cursor,
            fetching: Cell::new(api_url.is_some()),
        };
        Self::launch(url, true, Some(lobby), api_url, on_event)
    }

    fn launch(
        url: String,
        poll_fallback: bool,
        lobby: Option<ListLink>,
        api_url: Option<String>,
        on_event: Callback<ConnEvent>,
    ) -> Self {
        let inner = Rc::new(Inner {
            tx: RefCell::new(None),
            stopped: Cell::new(false),
            poll_fallback,
            lobby,
        });
        if let Some(api_url) = api_url {
            let (inner, on_event) = (Rc::clone(&inner), on_event.clone());
            spawn_local(async move { socket::first_snapshot(inner, api_url, on_event).await });
        }
        let run = Rc::clone(&inner);
        spawn_local(async move { socket::run(run, url, on_event).await });
        Connection { inner }
    }

    /// Queues a text frame; `false` when the socket is not open.
    pub fn send(&self, text: String) -> bool {
        self.inner.send(Out::Text(text))
    }

    /// The page's list did not take a list message: subscribes again from
    /// where that list stands (now, or as soon as a socket opens).
    pub fn resubscribe(&self) {
        if let Some(lobby) = &self.inner.lobby {
            if !lobby.fetching.get() {
                self.inner.send(Out::Resubscribe);
            }
        }
    }

    /// Whether the socket is open now.
    pub fn is_open(&self) -> bool {
        self.inner.tx.borrow().is_some()
    }

    /// Closes the socket after the frames already queued, for good.
    pub fn close(&self) {
        self.inner.stopped.set(true);
        if let Some(tx) = self.inner.tx.borrow_mut().take() {
            let _ = tx.unbounded_send(Out::Close);
        }
    }
}

impl Inner {
    fn send(&self, out: Out) -> bool {
        self.tx
            .borrow()
            .as_ref()
            .is_some_and(|tx| tx.unbounded_send(out).is_ok())
    }
}
