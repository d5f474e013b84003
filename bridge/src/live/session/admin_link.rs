//! An admin's own master connection, opened at its first command: its test
//! server lives as long as its WebSocket, its queries go where its changes
//! went (read-your-writes), and after each command the bridge asks over it
//! for the list, so viewers see the change as soon as the master applied it
//! (unless the list follows the master's changes as they happen: an
//! embedded master, a followed change feed; then the change comes that way
//! and the query is not sent).
//!
//! Like the [`Outbox`](super::outbox::Outbox), the link batches explicitly:
//! [`AdminLink::command`] and [`AdminLink::query`] queue, and
//! [`AdminLink::flush`] writes.

use std::{collections::VecDeque, io, sync::atomic::Ordering::Relaxed, sync::Arc, time::Duration};

use bytes::Bytes;
use futures_util::{FutureExt, SinkExt, StreamExt};
use protocol::{
    bridge::{ErrorCode, MasterState},
    codec::{Frame, FrameCodec},
    is_query_reply, Command,
};
use tokio::{net::TcpStream, time::Instant};
use tokio_tungstenite::tungstenite::{protocol::frame::coding::CloseCode, Message, Utf8Bytes};
use tokio_util::codec::Framed;
use tracing::{info, warn};

use super::{outbox::Close, status, Session};
use crate::{error::MasterError, live::upstream, metrics::Metrics};

/// Queries an admin may have in flight on its master connection; more means
/// the master stopped answering.
const MAX_PENDING: usize = 64;

/// Who asked for a query that went over an admin's master connection.
#[derive(Debug, Clone, Copy)]
enum Asker {
    Browser,
    /// The bridge, right after an admin command: the answer refreshes the
    /// shared list with this admin's change already in it. `asked` is when
    /// the query was written (set at the flush that sends it), so the
    /// shared list can tell an answer older than the one it has.
    Bridge {
        asked: Option<Instant>,
    },
}

/// What a list that came back over the link is for.
#[derive(Debug)]
pub(crate) enum Reply {
    /// The admin's own query: send it to the browser.
    Browser(Utf8Bytes),
    /// The bridge's refresh after a command, with when it was asked for:
    /// publish it to everyone.
    Everyone(Bytes, Instant),
    /// Nothing to do: not a list, or nobody asked.
    Nothing,
}

/// An admin's open connection to the master, with the askers of the
/// queries it has not answered yet, in order.
pub(crate) struct AdminLink {
    framed: Framed<TcpStream, FrameCodec>,
    pending: VecDeque<Asker>,
    timeout: Duration,
    metrics: Arc<Metrics>,
}

impl AdminLink {
    /// Connects to `master`; `timeout` also limits each write later.
    pub(crate) async fn open(
        master: &str,
        timeout: Duration,
        metrics: Arc<Metrics>,
    ) -> Result<Self, MasterError> {
        Ok(Self {
            framed: upstream::connect(master, timeout).await?,
            pending: VecDeque::new(),
            timeout,
            metrics,
        })
    }

    /// Queues an admin command, then (when `refresh`) the bridge's query
    /// that refreshes the shared list with the command's effect.
    pub(crate) async fn command(&mut self, json: &str, refresh: bool) -> Result<(), MasterError> {
        self.queue(json, None).await?;
        if !refresh {
            return Ok(());
        }
        self.queue(
            &Command::Query.to_json(),
            Some(Asker::Bridge { asked: None }),
        )
        .await
    }

    /// Queues the admin's own list query (its answer comes back as
    /// [`Reply::Browser`]).
    pub(crate) async fn query(&mut self, json: &str) -> Result<(), MasterError> {
        self.queue(json, Some(Asker::Browser)).await
    }

    async fn queue(&mut self, json: &str, asker: Option<Asker>) -> Result<(), MasterError> {
        if asker.is_some() {
            if self.pending.len() >= MAX_PENDING {
                return Err(MasterError::Unanswered(self.pending.len()));
            }
            self.metrics.master_queries.fetch_add(1, Relaxed);
        }
        match tokio::time::timeout(self.timeout, self.framed.feed(json.as_bytes())).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(MasterError::Write(e)),
            Err(_) => return Err(MasterError::NotReading),
        }
        if let Some(asker) = asker {
            self.pending.push_back(asker);
        }
        Ok(())
    }

    /// Writes what [`AdminLink::command`] and [`AdminLink::query`] queued.
    pub(crate) async fn flush(&mut self) -> Result<(), MasterError> {
        // The bridge's queries leave now: that is when they were asked.
        let now = Instant::now();
        for asker in &mut self.pending {
            if let Asker::Bridge { asked } = asker {
                asked.get_or_insert(now);
            }
        }
        match tokio::time::timeout(self.timeout, SinkExt::<&[u8]>::flush(&mut self.framed)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(MasterError::Write(e)),
            Err(_) => Err(MasterError::NotReading),
        }
    }

    /// The master's next frame (`None`: the connection closed); cancel-safe.
    pub(crate) async fn next(&mut self) -> Option<io::Result<Frame>> {
        self.framed.next().await
    }

    /// The master's next frame if one is already here, without waiting.
    pub(crate) fn ready(&mut self) -> Option<Option<io::Result<Frame>>> {
        self.framed.next().now_or_never()
    }

    /// What to do with a frame from the master; an error ends the link.
    pub(crate) fn reply(&mut self, frame: Option<io::Result<Frame>>) -> Result<Reply, MasterError> {
        let json = match frame {
            Some(Ok(Frame::Message(json))) => json,
            Some(Ok(Frame::Discarded(_))) => return Ok(Reply::Nothing),
            Some(Err(e)) => return Err(MasterError::Read(e)),
            None => return Err(MasterError::Closed),
        };
        if !is_query_reply(&json) {
            return Ok(Reply::Nothing);
        }
        Ok(match self.pending.pop_front() {
            Some(Asker::Browser) => match Utf8Bytes::try_from(json) {
                Ok(text) => Reply::Browser(text),
                Err(_) => Reply::Nothing,
            },
            // Always stamped: replies are read only after the flush that
            // sends their queries (now is the newest it can be otherwise).
            Some(Asker::Bridge { asked }) => {
                Reply::Everyone(json, asked.unwrap_or_else(Instant::now))
            }
            None => Reply::Nothing,
        })
    }
}

/// The session's side: relaying, batching and losing its admin link.
impl Session {
    /// Relays an admin command, connecting to the master at the first one.
    pub(super) async fn relay_command(&mut self, json: &str) -> Result<(), Close> {
        let link = match self.link.take() {
            Some(link) => link,
            None => match self.open_link().await {
                Ok(link) => link,
                Err(reason) => {
                    warn!(peer = %self.peer, %reason, "admin cannot reach the master");
                    return self.refuse(ErrorCode::MasterDown).await;
                }
            },
        };
        // Asked per command: the feed may have been lost or regained.
        let refresh = self.handle.upstream.polled();
        let queued = self.link.insert(link).command(json, refresh).await;
        self.relayed(queued).await
    }

    /// Relays the admin's list query: it goes where its changes went.
    pub(super) async fn relay_query(&mut self, json: &str) -> Result<(), Close> {
        let queued = match self.link.as_mut() {
            Some(link) => link.query(json).await,
            None => Ok(()),
        };
        self.relayed(queued).await
    }

    /// Writes what the browser frames of one batch relayed.
    pub(super) async fn flush_link(&mut self) -> Result<(), Close> {
        let flushed = match self.link.as_mut() {
            Some(link) => link.flush().await,
            None => Ok(()),
        };
        self.relayed(flushed).await
    }

    async fn open_link(&self) -> Result<AdminLink, MasterError> {
        let config = &self.handle.config;
        let link = AdminLink::open(
            &config.master,
            config.master_timeout,
            self.handle.metrics.clone(),
        )
        .await?;
        info!(peer = %self.peer, "admin connected to the master");
        Ok(link)
    }

    /// Handles `frame` and every further master frame already received;
    /// their replies to the browser leave together at the loop's flush:
    /// under load an admin's pipelined queries come back together, and one
    /// write instead of one per reply is most of what the relay can still
    /// save.
    pub(super) async fn on_link_batch(
        &mut self,
        frame: Option<std::io::Result<Frame>>,
    ) -> Result<(), Close> {
        let mut frame = frame;
        loop {
            let Some(link) = self.link.as_mut() else {
                return Ok(());
            };
            match link.reply(frame) {
                Ok(Reply::Browser(text)) => self.outbox.queue(Message::Text(text)).await?,
                Ok(Reply::Everyone(json, asked)) => {
                    self.handle.upstream.offer_admin_list(&json, asked)
                }
                Ok(Reply::Nothing) => {}
                Err(reason) => return self.link_lost(reason).await,
            }
            // Polled once: the select loop registers the real waker again.
            match self.link.as_mut().and_then(AdminLink::ready) {
                Some(next) => frame = next,
                None => return Ok(()),
            }
        }
    }

    /// Ends the session if relaying to the admin's master connection failed.
    async fn relayed(&mut self, sent: Result<(), MasterError>) -> Result<(), Close> {
        match sent {
            Ok(()) => Ok(()),
            Err(reason) => self.link_lost(reason).await,
        }
    }

    /// The admin's master connection is gone, and its registration with it.
    /// The page must reconnect to register again.
    async fn link_lost(&mut self, reason: MasterError) -> Result<(), Close> {
        warn!(peer = %self.peer, %reason, "admin's master connection dropped; closing");
        self.link = None;
        self.send_bridge(&status(MasterState::Down)).await?;
        Err(Close::With(CloseCode::Error, "master connection lost"))
    }
}

/// The admin link's next frame; never, without one.
pub(super) async fn next_frame(link: &mut Option<AdminLink>) -> Option<io::Result<Frame>> {
    match link {
        Some(link) => link.next().await,
        None => std::future::pending().await,
    }
}
