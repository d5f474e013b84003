//! One browser's WebSocket: classifies its frames, answers viewers from the
//! shared upstream, relays an admin's commands over its own master
//! connection, and enforces the per-connection limits.

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{atomic::Ordering::Relaxed, Arc},
};

use bytes::Bytes;
use futures_util::{FutureExt, SinkExt, StreamExt};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use protocol::{
    bridge::{BridgeMessage, ClientMessage, ErrorCode, Inbound, MasterState, Refusal},
    codec::{Frame, FrameCodec},
    delta::Resume,
    Command,
};
use tokio::{net::TcpStream, sync::watch, time::Instant};
use tokio_tungstenite::{
    tungstenite::{
        error::{CapacityError, Error as WsError},
        protocol::{
            frame::{
                coding::{CloseCode, Data, OpCode},
                Frame as WsFrame,
            },
            CloseFrame,
        },
        Message, Utf8Bytes,
    },
    WebSocketStream,
};
use tokio_util::codec::Framed;
use tracing::{debug, info, warn};

use crate::{
    config::WS_FRAGMENT,
    games::GamesSnapshot,
    limits::TokenBucket,
    server::Ctx,
    upstream::{self, Shared},
};

/// A browser's WebSocket.
pub(crate) type WebSocket = WebSocketStream<TokioIo<Upgraded>>;

/// Browser frames handled together before the replies are flushed.
const BATCH: usize = 16;

/// Queries an admin may have in flight on its master connection; more means
/// the master stopped answering.
const MAX_PENDING: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Viewer,
    Admin,
}

/// Who asked for a query that went over an admin's master connection.
#[derive(Debug, Clone, Copy)]
enum Asker {
    Browser,
    /// The bridge, right after an admin command: the answer refreshes the
    /// shared list with this admin's change already in it.
    Bridge,
}

/// An admin's own connection to the master.
struct MasterLink {
    framed: Framed<TcpStream, FrameCodec>,
    pending: VecDeque<Asker>,
}

/// How the session ends, when it does.
enum Close {
    /// Send a close frame with this code and reason.
    With(CloseCode, &'static str),
    /// The browser is gone or already closed; just drop the socket.
    Quietly,
}

enum Event {
    Shutdown,
    Browser(Option<Result<Message, WsError>>),
    Shared(bool),
    Link(Option<std::io::Result<Frame>>),
    /// Other games' servers changed (`false`: their refresher is gone).
    Games(bool),
    Ping,
}

/// A delta subscriber's position in the feed.
#[derive(Debug)]
struct DeltaSub {
    /// The list it holds (epoch and seq), once it was sent one.
    sent: Option<(Arc<str>, u64)>,
    /// Before the bridge's first list: what the subscribe asked to continue.
    resume: Option<Resume>,
}

pub(crate) struct Session {
    ctx: Arc<Ctx>,
    peer: SocketAddr,
    role: Role,
    subscribed: bool,
    /// A viewer's query waits for the first list after start-up.
    pending_query: bool,
    link: Option<MasterLink>,
    bucket: TokenBucket,
    /// Rate-limited frames in a row.
    strikes: u32,
    shared: watch::Receiver<Shared>,
    /// The master state this browser was last told (it starts "up").
    told_state: MasterState,
    /// The list sequence number last pushed to this subscriber.
    pushed_seq: u64,
    /// Delta subscribers (§2.1): what they hold; `None` for whole lists.
    deltas: Option<DeltaSub>,
    /// Other games' servers, when configured.
    games: Option<watch::Receiver<Option<GamesSnapshot>>>,
    /// The `bridgeGameServers` sequence number last pushed.
    pushed_games_seq: u64,
    last_heard: Instant,
    /// While set, [`Session::send`] queues without flushing: replies the
    /// master sent together leave in one write (see `Event::Link`).
    batching: bool,
}

impl Session {
    pub(crate) fn new(ctx: Arc<Ctx>, peer: SocketAddr) -> Self {
        let shared = ctx.upstream.subscribe();
        let games = ctx.games.as_ref().map(|g| g.subscribe());
        let bucket = TokenBucket::new(
            ctx.config.rate_per_sec,
            ctx.config.rate_burst,
            Instant::now().into_std(),
        );
        Self {
            ctx,
            peer,
            role: Role::Viewer,
            subscribed: false,
            pending_query: false,
            link: None,
            bucket,
            strikes: 0,
            shared,
            told_state: MasterState::Up,
            pushed_seq: 0,
            deltas: None,
            games,
            pushed_games_seq: 0,
            last_heard: Instant::now(),
            batching: false,
        }
    }

    /// Serves the socket until either side closes or the bridge shuts down.
    pub(crate) async fn run(mut self, mut ws: WebSocket) {
        self.ctx.metrics.viewers.fetch_add(1, Relaxed);
        debug!(peer = %self.peer, "websocket opened");
        let close = match self.serve(&mut ws).await {
            Ok(()) => Close::Quietly,
            Err(close) => close,
        };
        if let Close::With(code, reason) = close {
            self.close(&mut ws, code, reason).await;
        }
        match self.role {
            Role::Viewer => self.ctx.metrics.viewers.fetch_sub(1, Relaxed),
            Role::Admin => self.ctx.metrics.admins.fetch_sub(1, Relaxed),
        };
        if self.link.take().is_some() {
            info!(peer = %self.peer, "admin connection closed; its master connection too");
        }
        debug!(peer = %self.peer, "websocket closed");
    }

    async fn serve(&mut self, ws: &mut WebSocket) -> Result<(), Close> {
        // A browser arriving while the master is down learns it at once.
        if self.shared.borrow_and_update().master == MasterState::Down {
            self.told_state = MasterState::Down;
            self.send_bridge(ws, &status(MasterState::Down)).await?;
        }
        let period = self.ctx.config.ping_interval;
        let mut ping = tokio::time::interval_at(Instant::now() + period, period);
        loop {
            let event = tokio::select! {
                () = self.ctx.cancel.cancelled() => Event::Shutdown,
                msg = ws.next() => Event::Browser(msg),
                changed = self.shared.changed() => Event::Shared(changed.is_ok()),
                frame = next_link_frame(&mut self.link) => Event::Link(frame),
                changed = games_changed(&mut self.games) => Event::Games(changed),
                _ = ping.tick() => Event::Ping,
            };
            match event {
                Event::Shutdown => {
                    return Err(Close::With(CloseCode::Away, "bridge shutting down"))
                }
                Event::Browser(None) => return Ok(()),
                Event::Browser(Some(Err(e))) => return Err(read_error(e, self.peer)),
                Event::Browser(Some(Ok(msg))) => {
                    self.last_heard = Instant::now();
                    self.on_browser_batch(ws, msg).await?;
                }
                Event::Shared(true) => self.on_shared(ws).await?,
                Event::Shared(false) => {
                    return Err(Close::With(CloseCode::Away, "bridge shutting down"))
                }
                Event::Link(frame) => self.on_link_batch(ws, frame).await?,
                Event::Games(true) => self.push_games(ws).await?,
                Event::Games(false) => self.games = None,
                Event::Ping => {
                    if self.last_heard.elapsed() > self.ctx.config.pong_timeout {
                        info!(peer = %self.peer, "no pong; closing");
                        return Err(Close::With(CloseCode::Away, "no pong"));
                    }
                    self.send(ws, Message::Ping(Bytes::new())).await?;
                }
            }
        }
    }

    async fn on_browser(&mut self, ws: &mut WebSocket, msg: Message) -> Result<(), Close> {
        match msg {
            Message::Text(text) => {
                self.ctx.metrics.frames_in.fetch_add(1, Relaxed);
                self.on_text(ws, text).await
            }
            Message::Binary(_) => {
                self.ctx.metrics.frames_in.fetch_add(1, Relaxed);
                Err(Close::With(
                    CloseCode::Unsupported,
                    "binary frames are not accepted",
                ))
            }
            // Reading never yields raw frames.
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => Ok(()),
            // tungstenite answers the close handshake itself.
            Message::Close(_) => Err(Close::Quietly),
        }
    }

    async fn on_text(&mut self, ws: &mut WebSocket, text: Utf8Bytes) -> Result<(), Close> {
        if !self.bucket.take(Instant::now().into_std()) {
            self.strikes += 1;
            if self.strikes >= self.ctx.config.flood_close_after {
                warn!(peer = %self.peer, "message flood; closing");
                return Err(Close::With(CloseCode::Policy, "too many messages"));
            }
            return self.refuse(ws, ErrorCode::RateLimited).await;
        }
        self.strikes = 0;
        match Inbound::classify(text.as_bytes()) {
            Err(refusal) => self.refuse_with(ws, refusal).await,
            Ok(Inbound::Bridge(ClientMessage::Auth { token })) => {
                let ok = self.ctx.config.admin_token.matches(&token);
                if ok {
                    if self.role == Role::Viewer {
                        self.role = Role::Admin;
                        self.ctx.metrics.viewers.fetch_sub(1, Relaxed);
                        self.ctx.metrics.admins.fetch_add(1, Relaxed);
                    }
                    info!(peer = %self.peer, "admin authenticated");
                    if self.ctx.config.hide_addresses {
                        if let Some(sub) = self.deltas.as_mut() {
                            // Its entries lack the addresses it may now see.
                            sub.sent = None;
                        }
                    }
                } else {
                    self.ctx.metrics.auth_failures.fetch_add(1, Relaxed);
                    warn!(peer = %self.peer, "bridgeAuth with a wrong token");
                }
                self.send_bridge(ws, &BridgeMessage::AuthResult { ok })
                    .await
            }
            Ok(Inbound::Bridge(ClientMessage::Subscribe(sub))) => {
                self.subscribed = true;
                self.pushed_seq = 0;
                self.pushed_games_seq = 0;
                self.deltas = sub.deltas.then_some(DeltaSub {
                    sent: None,
                    resume: sub.resume,
                });
                self.push_list(ws).await?;
                self.push_games(ws).await
            }
            Ok(Inbound::Bridge(ClientMessage::Unsubscribe)) => {
                self.subscribed = false;
                self.deltas = None;
                Ok(())
            }
            Ok(Inbound::Query) => {
                if self.link.is_some() {
                    // Read-your-writes: an admin's query goes where its changes went.
                    return self.relay(ws, &text, Some(Asker::Browser)).await;
                }
                self.answer_query(ws).await
            }
            Ok(Inbound::Admin { command }) => {
                if self.role != Role::Admin {
                    debug!(peer = %self.peer, %command, "admin command from a viewer");
                    return self.refuse(ws, ErrorCode::Forbidden).await;
                }
                if self.link.is_none() {
                    match upstream::connect(&self.ctx.config.master, self.ctx.config.master_timeout)
                        .await
                    {
                        Ok(framed) => {
                            info!(peer = %self.peer, "admin connected to the master");
                            self.link = Some(MasterLink {
                                framed,
                                pending: VecDeque::new(),
                            });
                        }
                        Err(reason) => {
                            warn!(peer = %self.peer, %reason, "admin cannot reach the master");
                            return self.refuse(ws, ErrorCode::MasterDown).await;
                        }
                    }
                }
                self.relay(ws, &text, None).await?;
                // Refresh the shared list over this connection, so viewers
                // see the change as soon as the master applied it.
                let query = Command::Query.to_json();
                self.relay(ws, &query, Some(Asker::Bridge)).await
            }
        }
    }

    /// Sends one message over the admin's master connection.
    async fn relay(
        &mut self,
        ws: &mut WebSocket,
        json: &str,
        asker: Option<Asker>,
    ) -> Result<(), Close> {
        let timeout = self.ctx.config.master_timeout;
        let Some(link) = self.link.as_mut() else {
            return Ok(());
        };
        if asker.is_some() {
            if link.pending.len() >= MAX_PENDING {
                warn!(peer = %self.peer, "the master does not answer the admin's queries");
                return self.link_lost(ws).await;
            }
            self.ctx.metrics.master_queries.fetch_add(1, Relaxed);
        }
        let sent = if self.batching {
            tokio::time::timeout(timeout, link.framed.feed(json.as_bytes())).await
        } else {
            tokio::time::timeout(timeout, link.framed.send(json.as_bytes())).await
        };
        if !matches!(sent, Ok(Ok(()))) {
            return self.link_lost(ws).await;
        }
        if let Some(asker) = asker {
            link.pending.push_back(asker);
        }
        Ok(())
    }

    async fn on_link(
        &mut self,
        ws: &mut WebSocket,
        frame: Option<std::io::Result<Frame>>,
    ) -> Result<(), Close> {
        let json = match frame {
            Some(Ok(Frame::Message(json))) => json,
            Some(Ok(Frame::Discarded(_))) => return Ok(()),
            None | Some(Err(_)) => return self.link_lost(ws).await,
        };
        if !upstream::is_query_reply(&json) {
            return Ok(());
        }
        let asker = self.link.as_mut().and_then(|l| l.pending.pop_front());
        match asker {
            Some(Asker::Browser) => match Utf8Bytes::try_from(json) {
                Ok(text) => self.send(ws, Message::Text(text)).await,
                Err(_) => Ok(()),
            },
            Some(Asker::Bridge) => {
                self.ctx.upstream.offer(&json);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// The admin's master connection is gone: its registration with it. The
    /// page must reconnect to register again.
    async fn link_lost(&mut self, ws: &mut WebSocket) -> Result<(), Close> {
        warn!(peer = %self.peer, "admin's master connection dropped; closing");
        self.link = None;
        self.send_bridge(ws, &status(MasterState::Down)).await?;
        Err(Close::With(CloseCode::Error, "master connection lost"))
    }

    async fn answer_query(&mut self, ws: &mut WebSocket) -> Result<(), Close> {
        let (state, list) = {
            let shared = self.shared.borrow();
            (shared.master, shared.list.clone())
        };
        if state == MasterState::Down {
            return self.refuse(ws, ErrorCode::MasterDown).await;
        }
        match list {
            Some(list) => {
                let text = self.list_text(&list);
                self.send(ws, Message::Text(text)).await
            }
            None => {
                self.pending_query = true;
                Ok(())
            }
        }
    }

    fn list_text(&self, list: &upstream::ListSnapshot) -> Utf8Bytes {
        match self.role {
            Role::Admin => list.full.clone(),
            Role::Viewer => list.viewer.clone(),
        }
    }

    /// The shared state changed: tell about reachability, push the list.
    async fn on_shared(&mut self, ws: &mut WebSocket) -> Result<(), Close> {
        let state = self.shared.borrow_and_update().master;
        if state != self.told_state {
            self.told_state = state;
            self.send_bridge(ws, &status(state)).await?;
        }
        if self.pending_query {
            self.pending_query = false;
            self.answer_query(ws).await?;
        }
        self.push_list(ws).await
    }

    /// Sends the current list to a subscriber unless it has it already.
    async fn push_list(&mut self, ws: &mut WebSocket) -> Result<(), Close> {
        if !self.subscribed {
            return Ok(());
        }
        if self.deltas.is_some() {
            return self.push_deltas(ws).await;
        }
        let list = self.shared.borrow().list.clone();
        let Some(list) = list else { return Ok(()) };
        if list.seq == self.pushed_seq {
            return Ok(());
        }
        self.pushed_seq = list.seq;
        let text = self.list_text(&list);
        self.send(ws, Message::Text(text)).await
    }

    /// Brings a delta subscriber to the newest list: the deltas it lacks
    /// (shared texts, encoded once for everyone), or a snapshot when they
    /// are gone; the first answer follows its subscribe's `epoch`/`since`.
    async fn push_deltas(&mut self, ws: &mut WebSocket) -> Result<(), Close> {
        let Some(state) = self.shared.borrow().feed.clone() else {
            return Ok(());
        };
        let admin = self.role == Role::Admin;
        let Some(sub) = self.deltas.as_mut() else {
            return Ok(());
        };
        let texts = match &sub.sent {
            Some((epoch, seq)) if *epoch == state.epoch => {
                if *seq == state.seq {
                    return Ok(());
                }
                state.after(*seq, admin)
            }
            _ => state.catch_up(sub.resume.take().as_ref(), admin),
        };
        sub.sent = Some((state.epoch.clone(), state.seq));
        for text in texts {
            self.send(ws, Message::Text(text)).await?;
        }
        Ok(())
    }

    /// Sends the other games' servers to a subscriber unless it has them.
    async fn push_games(&mut self, ws: &mut WebSocket) -> Result<(), Close> {
        if !self.subscribed {
            return Ok(());
        }
        let Some(games) = self.games.as_mut() else {
            return Ok(());
        };
        let Some(snapshot) = games.borrow_and_update().clone() else {
            return Ok(());
        };
        if snapshot.seq == self.pushed_games_seq {
            return Ok(());
        }
        self.pushed_games_seq = snapshot.seq;
        let text = match self.role {
            Role::Admin => snapshot.full,
            Role::Viewer => snapshot.viewer,
        };
        self.send(ws, Message::Text(text)).await
    }

    async fn refuse(&mut self, ws: &mut WebSocket, code: ErrorCode) -> Result<(), Close> {
        self.refuse_with(ws, code.into()).await
    }

    async fn refuse_with(&mut self, ws: &mut WebSocket, refusal: Refusal) -> Result<(), Close> {
        self.ctx.metrics.refused(refusal.code);
        self.send_bridge(ws, &refusal.to_message()).await
    }

    async fn send_bridge(&mut self, ws: &mut WebSocket, msg: &BridgeMessage) -> Result<(), Close> {
        self.send(ws, Message::Text(msg.to_json().into())).await
    }

    /// Handles `msg` and up to [`BATCH`] further browser frames already
    /// received, then flushes what they relayed to the master and answered
    /// the browser, once each.
    async fn on_browser_batch(&mut self, ws: &mut WebSocket, msg: Message) -> Result<(), Close> {
        self.batching = true;
        let mut handled = self.on_browser(ws, msg).await;
        for _ in 0..BATCH {
            if handled.is_err() {
                break;
            }
            // Polled once: the select loop registers the real waker again.
            match ws.next().now_or_never() {
                Some(Some(Ok(msg))) => handled = self.on_browser(ws, msg).await,
                // Errors and the end are seen again by the select loop.
                _ => break,
            }
        }
        self.batching = false;
        handled?;
        self.flush_link(ws).await?;
        self.send_flush(ws).await
    }

    /// Writes what [`Session::relay`] queued for the master while batching.
    async fn flush_link(&mut self, ws: &mut WebSocket) -> Result<(), Close> {
        let timeout = self.ctx.config.master_timeout;
        let Some(link) = self.link.as_mut() else {
            return Ok(());
        };
        if !matches!(
            tokio::time::timeout(timeout, SinkExt::<&[u8]>::flush(&mut link.framed)).await,
            Ok(Ok(()))
        ) {
            return self.link_lost(ws).await;
        }
        Ok(())
    }

    /// Handles `frame` and every further master frame already received,
    /// then writes their replies to the browser at once: under load an
    /// admin's pipelined queries come back together, and one write instead
    /// of one per reply is most of what the relay can still save.
    async fn on_link_batch(
        &mut self,
        ws: &mut WebSocket,
        frame: Option<std::io::Result<Frame>>,
    ) -> Result<(), Close> {
        self.batching = true;
        let mut handled = self.on_link(ws, frame).await;
        while handled.is_ok() {
            // Polled once: the select loop registers the real waker again.
            let ready = match self.link.as_mut() {
                Some(link) => link.framed.next().now_or_never(),
                None => None,
            };
            match ready {
                Some(frame) => handled = self.on_link(ws, frame).await,
                None => break,
            }
        }
        self.batching = false;
        handled?;
        self.send_flush(ws).await
    }

    /// Writes whatever [`Session::send`] queued while batching.
    async fn send_flush(&mut self, ws: &mut WebSocket) -> Result<(), Close> {
        let flushed = tokio::select! {
            r = tokio::time::timeout(self.ctx.config.write_timeout, ws.flush()) => r,
            () = self.ctx.cancel.cancelled() => return Err(Close::Quietly),
        };
        match flushed {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                debug!(peer = %self.peer, error = %e, "write failed");
                Err(Close::Quietly)
            }
            Err(_) => {
                info!(peer = %self.peer, "browser does not read; dropping it");
                Err(Close::Quietly)
            }
        }
    }

    /// Writes one message (or only queues it while batching); a browser
    /// that does not take it in time, or a shutdown meanwhile, ends the
    /// session.
    async fn send(&mut self, ws: &mut WebSocket, msg: Message) -> Result<(), Close> {
        let counts = matches!(msg, Message::Text(_));
        let batching = self.batching;
        let write = async {
            // A large text leaves in fragments: tungstenite's write buffer
            // then grows to one fragment, not to the whole message.
            match msg {
                Message::Text(text) if text.len() > WS_FRAGMENT => {
                    for frame in fragments(text) {
                        ws.feed(frame).await?;
                    }
                }
                msg => ws.feed(msg).await?,
            }
            if batching {
                Ok(())
            } else {
                ws.flush().await
            }
        };
        let sent = tokio::select! {
            r = tokio::time::timeout(self.ctx.config.write_timeout, write) => r,
            () = self.ctx.cancel.cancelled() => return Err(Close::Quietly),
        };
        match sent {
            Ok(Ok(())) => {
                if counts {
                    self.ctx.metrics.frames_out.fetch_add(1, Relaxed);
                }
                Ok(())
            }
            Ok(Err(e)) => {
                debug!(peer = %self.peer, error = %e, "write failed");
                Err(Close::Quietly)
            }
            Err(_) => {
                info!(peer = %self.peer, "browser does not read; dropping it");
                Err(Close::Quietly)
            }
        }
    }

    /// Sends a close frame and waits briefly for the browser's answer, so
    /// the close frame is not lost to a connection reset.
    async fn close(&mut self, ws: &mut WebSocket, code: CloseCode, reason: &'static str) {
        let frame = CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        };
        let sent = tokio::time::timeout(
            self.ctx
                .config
                .write_timeout
                .min(std::time::Duration::from_secs(1)),
            ws.send(Message::Close(Some(frame))),
        )
        .await;
        if !matches!(sent, Ok(Ok(()))) {
            return;
        }
        let _ = tokio::time::timeout(self.ctx.config.close_wait, async {
            while let Some(Ok(_)) = ws.next().await {}
        })
        .await;
        if code == CloseCode::Size {
            // The oversized frame's bytes are still unread: closing now
            // would reset the connection before the browser reads our close.
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
}

fn status(master: MasterState) -> BridgeMessage {
    BridgeMessage::Status { master }
}

/// A read error: an oversized message earns 1009, anything else ends quietly.
fn read_error(e: WsError, peer: SocketAddr) -> Close {
    match e {
        WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
            info!(%peer, size, max_size, "message too big; closing");
            Close::With(CloseCode::Size, "message too big")
        }
        e => {
            debug!(%peer, error = %e, "read failed");
            Close::Quietly
        }
    }
}

/// `text` as fragments of at most [`WS_FRAGMENT`] bytes (cut at character
/// boundaries) sharing its buffer.
fn fragments(text: Utf8Bytes) -> Vec<Message> {
    let mut cuts = Vec::with_capacity(text.len() / WS_FRAGMENT + 2);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + WS_FRAGMENT).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        cuts.push((start, end));
        start = end;
    }
    let bytes = Bytes::from(text);
    let last = cuts.len() - 1;
    cuts.into_iter()
        .enumerate()
        .map(|(i, (start, end))| {
            let opcode = if i == 0 { Data::Text } else { Data::Continue };
            Message::Frame(WsFrame::message(
                bytes.slice(start..end),
                OpCode::Data(opcode),
                i == last,
            ))
        })
        .collect()
}

async fn next_link_frame(link: &mut Option<MasterLink>) -> Option<std::io::Result<Frame>> {
    match link {
        Some(link) => link.framed.next().await,
        None => std::future::pending().await,
    }
}

/// Waits for the next change of the other games' servers; never, when
/// they are not configured.
async fn games_changed(games: &mut Option<watch::Receiver<Option<GamesSnapshot>>>) -> bool {
    match games {
        Some(rx) => rx.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(msg: &Message) -> (&[u8], OpCode, bool) {
        match msg {
            Message::Frame(f) => (f.payload(), f.header().opcode, f.header().is_final),
            other => panic!("not a frame: {other:?}"),
        }
    }

    #[test]
    fn fragments_cover_the_text_at_char_boundaries() {
        // Two-byte characters, so some cuts fall inside one.
        let text = format!("x{}", "é".repeat(WS_FRAGMENT * 2));
        let frames = fragments(Utf8Bytes::from(text.clone()));
        assert_eq!(frames.len(), 5);
        let mut joined = Vec::new();
        for (i, frame) in frames.iter().enumerate() {
            let (bytes, opcode, fin) = payload(frame);
            assert!(bytes.len() <= WS_FRAGMENT && !bytes.is_empty());
            assert!(std::str::from_utf8(bytes).is_ok());
            let want = if i == 0 { Data::Text } else { Data::Continue };
            assert_eq!(opcode, OpCode::Data(want));
            assert_eq!(fin, i == frames.len() - 1);
            joined.extend_from_slice(bytes);
        }
        assert_eq!(joined, text.as_bytes());
    }

    #[test]
    fn an_exact_multiple_has_no_empty_fragment() {
        let frames = fragments(Utf8Bytes::from("y".repeat(WS_FRAGMENT * 2)));
        assert_eq!(frames.len(), 2);
        assert!(payload(&frames[1]).2);
    }
}
