//! One subscriber's life (the feed's `Handler`): read its subscribe, check
//! its token, send what it lacks, then each new list as its deltas, and a
//! heartbeat when nothing changed for the interval it asked for.
//!
//! Nothing is queued per subscriber: it reads the newest list from the
//! feed's `watch` after each write, and is sent the deltas since the list
//! it was last sent, or the snapshot when those have left the ring. A slow
//! subscriber therefore costs one write in flight, and one that does not
//! take a write within the write timeout is closed.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use bytes::Bytes;
use futures_util::StreamExt;
use protocol::{
    codec::{Frame, FrameCodec},
    feed::{FeedRefusal, FeedSubscribe},
    frame::frame,
};
use tokio::{
    io::AsyncWriteExt,
    net::{tcp::OwnedWriteHalf, TcpStream},
    sync::{OwnedSemaphorePermit, Semaphore},
    time::Instant,
};
use tokio_util::{codec::FramedRead, sync::CancellationToken};
use tracing::{debug, warn};

use super::{
    state::{frames, FeedList, FeedPublisher, Sending},
    stats::FeedStats,
    token::FeedToken,
};
use crate::{limits::LogThrottle, logtext::cut, throttled};

/// Serves one subscriber until it leaves, stalls, or the feed stops.
pub(super) struct Handler {
    pub(super) peer: SocketAddr,
    pub(super) publisher: Arc<FeedPublisher>,
    pub(super) token: Option<FeedToken>,
    pub(super) first_message_timeout: Duration,
    pub(super) write_timeout: Duration,
    pub(super) stats: Arc<FeedStats>,
    /// One WARN per interval about refused subscribers, for the whole feed.
    pub(super) refusals: Arc<LogThrottle>,
    /// The feed's subscriber slots: one is taken once the subscribe was
    /// read and its token checked, never before.
    pub(super) slots: Arc<Semaphore>,
    pub(super) cancel: CancellationToken,
}

/// Why a subscriber's connection ended (logged at DEBUG, or INFO for a
/// subscriber that does not read).
#[derive(Debug)]
enum End {
    Left,
    Refused(FeedRefusal),
    /// Every subscriber slot is taken.
    Full,
    Silent,
    Stalled,
    WriteFailed(std::io::Error),
    ExtraMessage,
    Stopped,
}

impl Handler {
    /// Serves the connection; `waiting` is its place among those waiting
    /// to subscribe, given back once it subscribed or left.
    pub(super) async fn run(self, socket: TcpStream, waiting: OwnedSemaphorePermit) {
        let (rd, mut wr) = socket.into_split();
        let mut frames = FramedRead::new(rd, FrameCodec::default());
        let end = self.serve(&mut frames, &mut wr, waiting).await;
        match &end {
            End::Full => {
                self.stats.count(&self.stats.full);
                throttled!(warn, peer = %self.peer, "feed full (--feed-max-subscribers); subscriber refused");
            }
            End::Stalled => {
                throttled!(lines = 4; info, peer = %self.peer, "feed subscriber does not read its writes; closing (it catches up when it reconnects)")
            }
            End::Refused(reason) => {
                self.stats.count(&self.stats.refused);
                if let Err(e) = self
                    .write(&mut wr, &[&Bytes::from(frame(reason.to_json().as_bytes()))])
                    .await
                {
                    debug!(peer = %self.peer, ?e, "refusal not delivered");
                }
                debug!(peer = %self.peer, %reason, "feed subscriber refused");
                if let Some(held_back) = self.refusals.allow(std::time::Instant::now()) {
                    warn!(peer = %self.peer, %reason, "feed subscriber refused (one line per 10 s; {held_back} more refused since the last)");
                }
            }
            End::WriteFailed(e) => debug!(peer = %self.peer, error = %e, "feed write failed"),
            other => debug!(peer = %self.peer, end = ?other, "feed subscriber gone"),
        }
        let _ = wr.shutdown().await;
    }

    async fn serve(
        &self,
        frames: &mut FramedRead<tokio::net::tcp::OwnedReadHalf, FrameCodec>,
        wr: &mut OwnedWriteHalf,
        waiting: OwnedSemaphorePermit,
    ) -> End {
        let first = tokio::select! {
            first = tokio::time::timeout(self.first_message_timeout, first_message(frames)) => first,
            () = self.cancel.cancelled() => return End::Stopped,
        };
        let subscribe = match first {
            Err(_) => return End::Silent,
            Ok(None) => return End::Left,
            Ok(Some(json)) => match FeedSubscribe::parse(&json) {
                Ok(s) => s,
                Err(e) => {
                    debug!(peer = %self.peer, error = %cut(&e), "not a feed subscribe");
                    return End::Refused(FeedRefusal::Malformed);
                }
            },
        };
        if let Some(token) = &self.token {
            let given = subscribe.token.as_deref().unwrap_or_default();
            if !token.matches(given) {
                return End::Refused(FeedRefusal::Token);
            }
        }
        drop(waiting);
        let Ok(_slot) = self.slots.clone().try_acquire_owned() else {
            return End::Full;
        };
        let heartbeat = subscribe.heartbeat();
        let _counted = self.stats.subscribed();
        let mut rx = self.publisher.subscribe();
        let mut sent: Arc<FeedList> = rx.borrow_and_update().clone();
        // The epoch it names is the peer's text: cut. A bridge subscribes
        // once per reconnect; a host that subscribes in a loop is throttled.
        let (resume_epoch, resume_since) = match &subscribe.resume {
            Some(r) => (Some(cut(&r.epoch)), Some(r.since)),
            None => (None, None),
        };
        throttled!(lines = 10; info, peer = %self.peer, epoch = sent.epoch(), seq = sent.seq(), resume_epoch = resume_epoch.map(tracing::field::display), resume_since, "feed subscriber");
        if let Err(end) = self
            .send(wr, &sent.catch_up(subscribe.resume.as_ref()))
            .await
        {
            return end;
        }
        let mut idle_until = Instant::now() + heartbeat;
        loop {
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        return End::Stopped;
                    }
                    let state = rx.borrow_and_update().clone();
                    if state.seq() == sent.seq() {
                        continue;
                    }
                    if let Err(end) = self.send(wr, &state.after(sent.seq())).await {
                        return end;
                    }
                    sent = state;
                }
                () = tokio::time::sleep_until(idle_until) => {
                    if let Err(end) = self.write(wr, &[sent.confirm()]).await {
                        return end;
                    }
                    self.stats.count(&self.stats.heartbeats);
                }
                frame = frames.next() => return match frame {
                    None | Some(Err(_)) => End::Left,
                    Some(Ok(_)) => End::ExtraMessage,
                },
                () = self.cancel.cancelled() => return End::Stopped,
            }
            idle_until = Instant::now() + heartbeat;
        }
    }

    /// Writes one catch-up, counting what it was.
    async fn send(&self, wr: &mut OwnedWriteHalf, out: &Sending<'_>) -> Result<(), End> {
        match out {
            Sending::Snapshot(_) => self.stats.count(&self.stats.snapshots),
            Sending::Deltas(d) => {
                let n = u64::try_from(d.len()).unwrap_or(u64::MAX);
                self.stats
                    .deltas
                    .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            }
        }
        self.write(wr, &frames(out)).await
    }

    /// Writes `out` within the write timeout.
    async fn write(&self, wr: &mut OwnedWriteHalf, out: &[&Bytes]) -> Result<(), End> {
        let all = async {
            for f in out {
                wr.write_all(f).await?;
            }
            Ok::<_, std::io::Error>(())
        };
        match tokio::time::timeout(self.write_timeout, all).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(End::WriteFailed(e)),
            Err(_) => Err(End::Stalled),
        }
    }
}

/// The first message's JSON; `None` if the peer left first. Discarded
/// bytes (garbage, oversize) are skipped: the timeout bounds them.
async fn first_message(
    frames: &mut FramedRead<tokio::net::tcp::OwnedReadHalf, FrameCodec>,
) -> Option<Bytes> {
    loop {
        match frames.next().await? {
            Ok(Frame::Message(json)) => return Some(json),
            Ok(Frame::Discarded(_)) => {}
            Err(_) => return None,
        }
    }
}
