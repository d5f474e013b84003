//! A WebSocket to the bridge that keeps itself alive: it reconnects with
//! the backoff schedule, optionally falls back to polling when pushes do not
//! arrive, and reports everything through a `Callback`.

use std::{
    cell::{Cell, RefCell},
    rc::Rc,
};

use futures_channel::mpsc;
use futures_util::{
    future::{poll_fn, select, Either},
    SinkExt, StreamExt,
};
use gloo_net::websocket::{futures::WebSocket, Message, State as WsState};
use gloo_timers::future::{IntervalStream, TimeoutFuture};
use protocol::Command;
use wasm_bindgen_futures::spawn_local;
use yew::Callback;

use crate::{
    backoff,
    incoming::{self, Incoming},
    polling::{PollChange, Poller},
    services::browser,
};

/// Give up on a socket that has not opened after this long.
const OPEN_TIMEOUT_MS: u32 = 10_000;
/// A connection that stayed up this long resets the backoff.
const HEALTHY_AFTER_MS: f64 = 5000.0;
/// Granularity of the polling timer.
const TICK_MS: u32 = 250;

/// What happens on the connection.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnEvent {
    Connecting,
    /// The socket is open; `send` works from now on (also inside the callback).
    Opened,
    /// A parsed message; `perf_ms` is `performance.now()` when its frame
    /// arrived, before parsing (render metrics start there).
    Message {
        msg: Incoming,
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
    Close,
}

struct Inner {
    tx: RefCell<Option<mpsc::UnboundedSender<Out>>>,
    stopped: Cell<bool>,
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
        let conn = Connection {
            inner: Rc::new(Inner {
                tx: RefCell::new(None),
                stopped: Cell::new(false),
            }),
        };
        let inner = Rc::clone(&conn.inner);
        spawn_local(async move { run(inner, url, poll_fallback, on_event).await });
        conn
    }

    /// Queues a text frame; `false` when the socket is not open.
    pub fn send(&self, text: String) -> bool {
        self.inner
            .tx
            .borrow()
            .as_ref()
            .is_some_and(|tx| tx.unbounded_send(Out::Text(text)).is_ok())
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

async fn open(url: &str) -> Option<WebSocket> {
    let mut ws = WebSocket::open(url).ok()?;
    let ready = poll_fn(|cx| ws.poll_ready_unpin(cx));
    let opened = matches!(
        select(ready, TimeoutFuture::new(OPEN_TIMEOUT_MS)).await,
        Either::Left((Ok(()), _))
    );
    (opened && matches!(ws.state(), WsState::Open)).then_some(ws)
}

async fn run(inner: Rc<Inner>, url: String, poll_fallback: bool, on_event: Callback<ConnEvent>) {
    let mut attempt = 0u32;
    while !inner.stopped.get() {
        on_event.emit(ConnEvent::Connecting);
        if let Some(ws) = open(&url).await {
            if inner.stopped.get() {
                return;
            }
            let opened = browser::now_ms();
            let got_message = serve(&inner, ws, poll_fallback, &on_event).await;
            if got_message || browser::now_ms() - opened >= HEALTHY_AFTER_MS {
                attempt = 0;
            }
        }
        inner.tx.borrow_mut().take();
        if inner.stopped.get() {
            return;
        }
        let delay = backoff::delay_ms(attempt, browser::random());
        attempt = attempt.saturating_add(1);
        on_event.emit(ConnEvent::Closed {
            retry_at_ms: browser::now_ms() + f64::from(delay),
        });
        TimeoutFuture::new(delay).await;
    }
}

/// Runs one open socket until it closes; returns whether anything arrived.
async fn serve(
    inner: &Inner,
    ws: WebSocket,
    poll_fallback: bool,
    on_event: &Callback<ConnEvent>,
) -> bool {
    let (mut write, mut read) = ws.split();
    let (tx, mut rx) = mpsc::unbounded();
    *inner.tx.borrow_mut() = Some(tx);
    on_event.emit(ConnEvent::Opened);

    let mut poller = Poller::new(poll_fallback, browser::now_ms());
    let mut got_message = false;
    // One timer for the socket's life: frames arriving do not restart it,
    // so a chatty bridge cannot starve the grace check or the polls.
    let mut ticks = IntervalStream::new(TICK_MS);
    loop {
        let inbound_or_outbound = select(read.next(), rx.next());
        match select(inbound_or_outbound, ticks.next()).await {
            Either::Left((Either::Left((frame, _)), _)) => match frame {
                Some(Ok(Message::Text(text))) => {
                    got_message = true;
                    let perf_ms = browser::perf_now();
                    let parsed = incoming::parse(&text);
                    if matches!(parsed, Ok(Incoming::List(_))) {
                        browser::note_parse(browser::perf_now() - perf_ms);
                    }
                    if let Ok(msg) = parsed {
                        match msg {
                            Incoming::List(_) if poller.on_list() == Some(PollChange::Stopped) => {
                                on_event.emit(ConnEvent::PushesResumed);
                            }
                            Incoming::Error { .. } => poller.on_error(),
                            _ => {}
                        }
                        on_event.emit(ConnEvent::Message { msg, perf_ms });
                    }
                }
                Some(Ok(Message::Bytes(_))) => {}
                // An error event is followed by a close event.
                Some(Err(gloo_net::websocket::WebSocketError::ConnectionError)) => {}
                Some(Err(_)) | None => break,
            },
            Either::Left((Either::Right((out, _)), _)) => match out {
                Some(Out::Text(text)) => {
                    if write.send(Message::Text(text)).await.is_err() {
                        break;
                    }
                }
                Some(Out::Close) | None => break,
            },
            Either::Right(_) => {
                let (send, change) = poller.on_tick(browser::now_ms());
                if change == Some(PollChange::Started) {
                    on_event.emit(ConnEvent::Polling);
                }
                if send
                    && write
                        .send(Message::Text(Command::Query.to_json()))
                        .await
                        .is_err()
                {
                    break;
                }
            }
        }
    }
    got_message
}
