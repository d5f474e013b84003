//! One browser's WebSocket: the event loop, and the dispatch of its frames
//! with the per-connection limits. The [`role`] (viewer or admin) changes
//! with `bridgeAuth`; viewers are answered from the shared upstream
//! ([`lists`]); an admin's commands go over its own master connection
//! ([`admin_link`], with the session's side of it); every reply leaves
//! through the [`outbox`]; what a subscriber was sent is kept in [`push`].

mod admin_link;
mod auth_guard;
mod handle;
mod lists;
mod meter;
mod outbox;
mod push;
mod role;

use std::{
    net::SocketAddr,
    sync::{atomic::Ordering::Relaxed, Arc},
};

use bytes::Bytes;
use futures_util::{stream::SplitStream, FutureExt, StreamExt};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use master::{logtext::cut, throttled};
use protocol::{
    bridge::{BridgeMessage, ClientMessage, ErrorCode, Inbound, MasterState, Refusal},
    codec::Frame,
};
use tokio::{sync::watch, time::Instant};
use tokio_tungstenite::{
    tungstenite::{
        error::{CapacityError, Error as WsError},
        protocol::{frame::coding::CloseCode, Role as WsRole, WebSocketConfig},
        Message, Utf8Bytes,
    },
    WebSocketStream,
};
use tracing::{debug, info};

pub(crate) use auth_guard::{AuthGuard, Checked};
pub(crate) use handle::{Handle, SessionSettings};

pub(crate) use self::role::Role;
use self::{
    admin_link::AdminLink,
    lists::{games_changed, Held},
    meter::{FrameMeter, Rate, Spend},
    outbox::{Close, Outbox},
    push::Subscription,
};
use crate::{
    live::{games::GamesWatch, upstream::Shared},
    metrics::Metrics,
};

/// A browser's WebSocket.
pub(crate) type WebSocket = WebSocketStream<FrameMeter<TokioIo<Upgraded>>>;

/// Browser frames handled together before the replies are flushed.
const BATCH: usize = 16;

enum Event {
    Shutdown,
    Browser(Option<Result<Message, WsError>>),
    Shared(bool),
    Link(Option<std::io::Result<Frame>>),
    /// Other games' servers changed (`false`: their refresher is gone).
    Games(bool),
    Ping,
    /// A held answer may leave now.
    AnswerDue,
}

/// Serves `peer`'s upgraded connection as a WebSocket until either side
/// closes or the bridge shuts down.
pub(crate) async fn run(
    handle: Arc<Handle>,
    peer: SocketAddr,
    io: TokioIo<Upgraded>,
    config: WebSocketConfig,
) {
    let rate = Rate::new(&handle.config);
    let io = FrameMeter::new(io, rate.clone());
    let ws = WebSocketStream::from_raw_socket(io, WsRole::Server, Some(config)).await;
    let (sink, reader) = ws.split();
    let outbox = Outbox::new(sink, peer, &handle);
    Session::new(handle, peer, reader, outbox, rate).run().await;
}

struct Session {
    handle: Arc<Handle>,
    peer: SocketAddr,
    /// The socket's read side; the write side is the outbox's.
    reader: SplitStream<WebSocket>,
    outbox: Outbox,
    role: Role,
    /// A viewer's query waits for the first list after start-up.
    pending_query: bool,
    /// When the next answer with a whole list (or a catch-up) may leave:
    /// one per `Config::query_interval`, and only with a token of the
    /// client address's budget.
    next_answer: Instant,
    /// What the browser asked for and waits for until `next_answer`.
    held: Held,
    link: Option<AdminLink>,
    /// The message rate, shared with the socket's [`FrameMeter`].
    rate: Arc<Rate>,
    shared: watch::Receiver<Shared>,
    /// The master state this browser was last told (it starts "up").
    told_state: MasterState,
    subscription: Subscription,
    /// Other games' servers, when configured.
    games: Option<GamesWatch>,
    last_heard: Instant,
}

impl Session {
    fn new(
        handle: Arc<Handle>,
        peer: SocketAddr,
        reader: SplitStream<WebSocket>,
        outbox: Outbox,
        rate: Arc<Rate>,
    ) -> Self {
        Self {
            shared: handle.subscribe_shared(),
            games: handle.subscribe_games(),
            handle,
            peer,
            reader,
            outbox,
            role: Role::Viewer,
            pending_query: false,
            next_answer: Instant::now(),
            held: Held::default(),
            link: None,
            rate,
            told_state: MasterState::Up,
            subscription: Subscription::default(),
            last_heard: Instant::now(),
        }
    }

    async fn run(mut self) {
        self.handle.metrics.viewers.fetch_add(1, Relaxed);
        debug!(peer = %self.peer, "websocket opened");
        let close = self.serve().await.err().unwrap_or(Close::Quietly);
        let Session {
            handle,
            peer,
            mut reader,
            outbox,
            role,
            link,
            ..
        } = self;
        if let Close::With(code, reason) = close {
            outbox.close(&mut reader, code, reason).await;
        }
        match role {
            Role::Viewer => handle.metrics.viewers.fetch_sub(1, Relaxed),
            Role::Admin => handle.metrics.admins.fetch_sub(1, Relaxed),
        };
        if link.is_some() {
            info!(%peer, "admin connection closed; its master connection too");
        }
        debug!(%peer, "websocket closed");
    }

    async fn serve(&mut self) -> Result<(), Close> {
        // A browser arriving while the master is down learns it at once.
        if self.shared.borrow_and_update().master == MasterState::Down {
            self.told_state = MasterState::Down;
            self.send_bridge(&status(MasterState::Down)).await?;
            self.outbox.flush().await?;
        }
        let period = self.handle.config.ping_interval;
        let mut ping = tokio::time::interval_at(Instant::now() + period, period);
        loop {
            let event = tokio::select! {
                () = self.handle.cancel.cancelled() => Event::Shutdown,
                msg = self.reader.next() => Event::Browser(msg),
                changed = self.shared.changed() => Event::Shared(changed.is_ok()),
                frame = admin_link::next_frame(&mut self.link) => Event::Link(frame),
                changed = games_changed(&mut self.games) => Event::Games(changed),
                _ = ping.tick() => Event::Ping,
                () = tokio::time::sleep_until(self.next_answer), if self.held.any() => {
                    Event::AnswerDue
                }
            };
            match event {
                Event::Shutdown | Event::Shared(false) => {
                    return Err(Close::With(CloseCode::Away, "bridge shutting down"))
                }
                Event::Browser(None) => return Ok(()),
                Event::Browser(Some(Err(e))) => {
                    return Err(read_error(e, self.peer, &self.handle.metrics))
                }
                Event::Browser(Some(Ok(msg))) => {
                    self.last_heard = Instant::now();
                    self.on_browser_batch(msg).await?;
                }
                Event::Shared(true) => self.on_shared().await?,
                Event::Link(frame) => self.on_link_batch(frame).await?,
                Event::Games(true) => self.push_games().await?,
                Event::Games(false) => self.games = None,
                Event::Ping => {
                    if self.last_heard.elapsed() > self.handle.config.pong_timeout {
                        self.handle.metrics.closed_no_pong.fetch_add(1, Relaxed);
                        throttled!(info, peer = %self.peer, "no pong; closing");
                        return Err(Close::With(CloseCode::Away, "no pong"));
                    }
                    self.outbox.queue(Message::Ping(Bytes::new())).await?;
                }
                Event::AnswerDue => self.answer_held().await?,
            }
            // Whatever the event queued leaves in one write.
            self.outbox.flush().await?;
        }
    }

    /// Handles `msg` and up to [`BATCH`] further browser frames already
    /// received, then writes what they relayed to the master (their replies
    /// to the browser leave at the loop's flush).
    async fn on_browser_batch(&mut self, msg: Message) -> Result<(), Close> {
        self.on_browser(msg).await?;
        for _ in 0..BATCH {
            // Polled once: the select loop registers the real waker again.
            match self.reader.next().now_or_never() {
                Some(Some(Ok(msg))) => self.on_browser(msg).await?,
                // Errors and the end are seen again by the select loop.
                _ => break,
            }
        }
        self.flush_link().await
    }

    async fn on_browser(&mut self, msg: Message) -> Result<(), Close> {
        match msg {
            Message::Text(text) => {
                self.handle.metrics.frames_in.fetch_add(1, Relaxed);
                self.on_text(text).await
            }
            Message::Binary(_) => {
                self.handle.metrics.frames_in.fetch_add(1, Relaxed);
                Err(Close::With(
                    CloseCode::Unsupported,
                    "binary frames are not accepted",
                ))
            }
            // Control frames cost like messages (tungstenite has queued the
            // pong already): a flood of them closes the socket, the rest
            // are dropped silently.
            Message::Ping(_) | Message::Pong(_) => self.over_rate().map(drop),
            // Reading never yields raw frames.
            Message::Frame(_) => Ok(()),
            // tungstenite answers the close handshake itself.
            Message::Close(_) => Err(Close::Quietly),
        }
    }

    /// Spends a token of the connection's rate limit: `Ok(true)` when there
    /// was none (the frame is over the rate), an error when that makes a
    /// flood (1008).
    fn over_rate(&mut self) -> Result<bool, Close> {
        match self.rate.spend() {
            Spend::Pass => Ok(false),
            Spend::Excess => Ok(true),
            Spend::Flood => {
                self.handle.metrics.closed_flood.fetch_add(1, Relaxed);
                throttled!(warn, peer = %self.peer, "message flood; closing");
                Err(FLOOD)
            }
        }
    }

    async fn on_text(&mut self, text: Utf8Bytes) -> Result<(), Close> {
        if self.over_rate()? {
            return self.refuse(ErrorCode::RateLimited).await;
        }
        match Inbound::classify(text.as_bytes()) {
            Err(refusal) => self.refuse_with(refusal).await,
            Ok(Inbound::Bridge(ClientMessage::Auth { token })) => self.on_auth(&token).await,
            Ok(Inbound::Bridge(ClientMessage::Subscribe(sub))) => self.on_subscribe(sub).await,
            Ok(Inbound::Bridge(ClientMessage::Unsubscribe)) => {
                // The latest word: a held subscribe is dropped too.
                self.held.subscribe = None;
                self.subscription.stop();
                Ok(())
            }
            Ok(Inbound::Query) if self.link.is_some() => self.relay_query(&text).await,
            Ok(Inbound::Query) => self.on_query().await,
            Ok(Inbound::Admin { command }) => {
                if self.role != Role::Admin {
                    debug!(peer = %self.peer, command = %cut(&command), "admin command from a viewer");
                    return self.refuse(ErrorCode::Forbidden).await;
                }
                self.relay_command(&text).await
            }
        }
    }

    async fn refuse(&mut self, code: ErrorCode) -> Result<(), Close> {
        self.refuse_with(code.into()).await
    }

    /// Refuses a frame with `refusal`'s code and sentence.
    async fn refuse_with(&mut self, refusal: Refusal) -> Result<(), Close> {
        self.handle.metrics.refused(refusal.code);
        self.send_bridge(&refusal.to_message()).await
    }

    async fn send_bridge(&mut self, msg: &BridgeMessage) -> Result<(), Close> {
        self.outbox.queue(Message::Text(msg.to_json().into())).await
    }
}

fn status(master: MasterState) -> BridgeMessage {
    BridgeMessage::Status { master }
}

/// How a message flood (continuation frames included) is closed.
const FLOOD: Close = Close::With(CloseCode::Policy, "too many messages");

/// A read error: an oversized message earns 1009, a flood of continuation
/// frames 1008, anything else ends quietly. A browser can repeat the first
/// two by reconnecting: they are counted, and logged throttled.
fn read_error(e: WsError, peer: SocketAddr, metrics: &Metrics) -> Close {
    match e {
        WsError::Io(e) if meter::is_flood(&e) => {
            metrics.closed_flood.fetch_add(1, Relaxed);
            throttled!(warn, %peer, "continuation frame flood; closing");
            FLOOD
        }
        WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
            metrics.closed_too_big.fetch_add(1, Relaxed);
            throttled!(info, %peer, size, max_size, "message too big; closing");
            Close::With(CloseCode::Size, "message too big")
        }
        e => {
            debug!(%peer, error = %cut(&e), "read failed");
            Close::Quietly
        }
    }
}
