//! The socket loop: opens, reconnects with the backoff schedule, reads and
//! writes frames, drives the polling fallback and, for the lobby, hands
//! list messages to the page and subscribes from where the page's list
//! stands (its [`Cursor`](super::cursor::Cursor) asks).

use std::rc::Rc;

use futures_channel::mpsc;
use futures_util::{
    future::{poll_fn, select, Either},
    SinkExt, StreamExt,
};
use gloo_net::websocket::{futures::WebSocket, Message, State as WsState};
use gloo_timers::future::{IntervalStream, TimeoutFuture};
use protocol::Command;
use yew::Callback;

use super::{
    backoff,
    decode::{self, Incoming},
    fetch,
    polling::{PollChange, PollState},
    ConnEvent, Inner, ListMessage, Out,
};
use crate::services::{browser, metrics};

/// Hands a list message to the page, after the render timing took note
/// of it.
fn show(message: ListMessage, (perf_ms, parse_ms): (f64, f64), on_event: &Callback<ConnEvent>) {
    metrics::received(perf_ms, parse_ms, message.kind());
    on_event.emit(ConnEvent::List { message, perf_ms });
}

/// Give up on a socket that has not opened after this long.
const OPEN_TIMEOUT_MS: u32 = 10_000;
/// Subscribe without the fetched snapshot when it has not come by then.
const FETCH_TIMEOUT_MS: u32 = 5_000;
/// A connection that stayed up this long resets the backoff.
const HEALTHY_AFTER_MS: f64 = 5000.0;
/// Granularity of the polling timer.
const TICK_MS: u32 = 250;

async fn open(url: &str) -> Option<WebSocket> {
    let mut ws = WebSocket::open(url).ok()?;
    let ready = poll_fn(|cx| ws.poll_ready_unpin(cx));
    let opened = matches!(
        select(ready, TimeoutFuture::new(OPEN_TIMEOUT_MS)).await,
        Either::Left((Ok(()), _))
    );
    (opened && matches!(ws.state(), WsState::Open)).then_some(ws)
}

/// Fetches the lobby's first snapshot, shows it, and lets an open socket
/// subscribe from it (or without it, when the fetch failed or took too long).
pub(super) async fn first_snapshot(inner: Rc<Inner>, url: String, on_event: Callback<ConnEvent>) {
    let Some(lobby) = &inner.lobby else { return };
    let fetched = match select(
        Box::pin(fetch::snapshot(&url)),
        TimeoutFuture::new(FETCH_TIMEOUT_MS),
    )
    .await
    {
        Either::Left((fetched, _)) => fetched,
        Either::Right(_) => None,
    };
    if let Some(f) = fetched {
        let message = ListMessage::Snapshot(f.snapshot);
        show(message, (f.perf_ms, f.parse_ms), &on_event);
    }
    lobby.fetching.set(false);
    inner.send(Out::Subscribe);
}

pub(super) async fn run(inner: Rc<Inner>, url: String, on_event: Callback<ConnEvent>) {
    let mut attempt = 0u32;
    while !inner.stopped.get() {
        on_event.emit(ConnEvent::Connecting);
        if let Some(ws) = open(&url).await {
            if inner.stopped.get() {
                return;
            }
            let opened = browser::now_ms();
            let got_message = serve(&inner, ws, &on_event).await;
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

/// One socket's life as the loop sees it.
struct Socket<'a> {
    inner: &'a Inner,
    on_event: &'a Callback<ConnEvent>,
    poller: PollState,
}

impl Socket<'_> {
    /// The `bridgeSubscribe` to send now; pushes are awaited from here on.
    fn subscribe(&mut self) -> Option<String> {
        let lobby = self.inner.lobby.as_ref()?;
        self.poller = PollState::new(self.inner.poll_fallback, browser::now_ms());
        Some(lobby.cursor.subscribe_json())
    }

    /// Handles one text frame.
    fn on_text(&mut self, text: &str) {
        let perf_ms = browser::perf_now();
        let parsed = decode::parse(text);
        let parse_ms = browser::perf_now() - perf_ms;
        let Ok(msg) = parsed else { return };
        if self.inner.lobby.is_none() {
            // A test server's own socket: everything, the answer to its
            // query included, goes to its owner.
            self.on_event.emit(ConnEvent::Message { msg, perf_ms });
            return;
        }
        let message = match msg {
            Incoming::List(message) => message,
            msg => {
                if matches!(msg, Incoming::Error { .. }) {
                    self.poller.on_error();
                }
                self.on_event.emit(ConnEvent::Message { msg, perf_ms });
                return;
            }
        };
        if self.poller.on_list() == Some(PollChange::Stopped) {
            self.on_event.emit(ConnEvent::PushesResumed);
        }
        show(message, (perf_ms, parse_ms), self.on_event);
    }
}

/// Runs one open socket until it closes; returns whether anything arrived.
async fn serve(inner: &Inner, ws: WebSocket, on_event: &Callback<ConnEvent>) -> bool {
    let (mut write, mut read) = ws.split();
    let (tx, mut rx) = mpsc::unbounded();
    *inner.tx.borrow_mut() = Some(tx);
    on_event.emit(ConnEvent::Opened);

    // Polling waits until the list is subscribed to.
    let mut socket = Socket {
        inner,
        on_event,
        poller: PollState::new(false, browser::now_ms()),
    };
    if inner.lobby.as_ref().is_some_and(|l| !l.fetching.get()) {
        inner.send(Out::Subscribe);
    }
    let mut got_message = false;
    // One timer for the socket's life: frames arriving do not restart it,
    // so a chatty bridge cannot starve the grace check or the polls.
    let mut ticks = IntervalStream::new(TICK_MS);
    loop {
        let inbound_or_outbound = select(read.next(), rx.next());
        let send = match select(inbound_or_outbound, ticks.next()).await {
            Either::Left((Either::Left((frame, _)), _)) => match frame {
                Some(Ok(Message::Text(text))) => {
                    got_message = true;
                    socket.on_text(&text);
                    None
                }
                Some(Ok(Message::Bytes(_))) => None,
                // An error event is followed by a close event.
                Some(Err(gloo_net::websocket::WebSocketError::ConnectionError)) => None,
                Some(Err(_)) | None => break,
            },
            Either::Left((Either::Right((out, _)), _)) => match out {
                Some(Out::Text(text)) => Some(text),
                Some(Out::Subscribe) => socket.subscribe(),
                Some(Out::Resubscribe) => inner.lobby.as_ref().map(|l| l.cursor.subscribe_json()),
                Some(Out::Close) | None => break,
            },
            Either::Right(_) => {
                let (send, change) = socket.poller.on_tick(browser::now_ms());
                if change == Some(PollChange::Started) {
                    on_event.emit(ConnEvent::Polling);
                }
                send.then(|| Command::Query.to_json())
            }
        };
        if let Some(text) = send {
            if write.send(Message::Text(text)).await.is_err() {
                break;
            }
        }
    }
    got_message
}
