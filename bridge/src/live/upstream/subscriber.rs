//! The list from a remote master's change feed (`--master-feed`): one TCP
//! connection on which the master pushes each change as a delta
//! (`protocol::feed`, `protocol::delta`), checked here with
//! [`FollowedList`] (a ledger of ids and sizes: the entries are held once,
//! in the bridge's published list), and the master's delta passed on as
//! the bridge's (`Upstream::pass_on`: nothing rebuilt or compared but what
//! it changed; a snapshot is numbered whole, `Upstream::follow`; after a
//! poll, the published list takes the deltas missed on what the feed's
//! list was when it last followed it, `protocol::delta::KeyedList`).
//! Deltas that do not fit how a master numbers its list lose the feed,
//! which is subscribed to again for a snapshot. No polling while it lasts.
//!
//! The feed is an input like any other: each entry must keep the rules of
//! the master protocol, the list must stay within [`MAX_MASTER_REPLY`] (the
//! bound of one polled reply), a master that breaks either loses the list
//! and is tried again only after the backoff, and whatever the bridge logs
//! about it is cut and throttled.
//!
//! Until the feed answers (a master that does not offer one, one that is
//! down, a wrong token) the bridge polls as without it ([`Poller`]), and
//! tries the feed again with [`Backoff`] up to `feed_retry_max`. The list
//! it holds is kept across connections: a reconnect names its `epoch` and
//! `seq`, and gets only the deltas it missed (or one snapshot from a
//! restarted master, which replaces the list).

use std::{borrow::Cow, sync::Arc, time::Duration};

use bytes::Bytes;
use futures_util::{FutureExt, SinkExt, StreamExt};
use master::{logtext::cut, throttled};
use protocol::{
    codec::{Frame, FrameCodec},
    delta::{Changeset, DeltaMessage, FollowedList, Keyed, Taken, Unfollowed},
    feed::{self, FeedRefusal, FeedSubscribe},
};
use tokio::{net::TcpStream, time::Instant};
use tokio_util::{codec::Framed, sync::CancellationToken};
use tracing::debug;

use super::{backoff::Backoff, connect, poller::Poller, FeedTarget, Upstream};
use crate::{
    config::{Config, MAX_MASTER_REPLY},
    error::{FeedError, MasterError},
};

/// Frames applied before the list is published: a catch-up of many deltas
/// is published once, and a master that never pauses still gets its
/// lists published.
const MAX_BATCH: usize = 256;

/// A feed connection whose first list message has arrived.
struct Opened {
    framed: Framed<TcpStream, FrameCodec>,
    first: Bytes,
}

/// The feed's mode: a remote master's change feed followed into the
/// [`Upstream`], and its [`Poller`] run while the feed cannot be followed
/// (admins' lists are wanted only then).
#[derive(Debug, Clone)]
pub struct Subscriber {
    upstream: Arc<Upstream>,
    config: Arc<Config>,
    target: FeedTarget,
    poller: Poller,
}

impl Subscriber {
    /// Follows the feed at `target` into `upstream` once run, polling the
    /// master `config` names meanwhile.
    pub fn new(upstream: Arc<Upstream>, config: Arc<Config>, target: FeedTarget) -> Self {
        let poller = Poller::new(upstream.clone(), config.clone());
        Self {
            upstream,
            config,
            target,
            poller,
        }
    }

    /// Follows the feed until `cancel` fires, polling whenever the feed
    /// cannot be followed.
    pub async fn run(self, cancel: CancellationToken) {
        let Self {
            upstream,
            config,
            target,
            poller,
        } = &self;
        let mut backoff = Backoff::new(config.reconnect_min, config.feed_retry_max);
        let mut list: Option<FollowedList> = None;
        let mut told = false;
        // How long to keep polling before the feed is tried again: nothing
        // at start or after a feed that closed, the backoff after one that
        // went silent (else a feed that answers and then hangs is followed
        // again at once, and the list flaps between its stale one and the
        // polled one).
        let mut first_wait = Duration::ZERO;
        loop {
            // Poll until the feed answers; the poller's connection closes
            // when this block ends.
            let opened = {
                let polling = poller.run(cancel.clone());
                tokio::pin!(polling);
                if !first_wait.is_zero() {
                    tokio::select! {
                        () = &mut polling => return,
                        () = tokio::time::sleep(first_wait) => {}
                    }
                }
                loop {
                    tokio::select! {
                        () = &mut polling => return,
                        opened = self.open(list.as_ref()) => match opened {
                            Ok(opened) => break opened,
                            Err(e) if !told => {
                                throttled!(warn, feed = %target.addr, error = %cut(&e), "cannot follow the master's change feed; polling the master until it can (retried, logged at DEBUG from now on)");
                                told = true;
                            }
                            Err(e) => debug!(feed = %target.addr, error = %cut(&e), "feed still unavailable"),
                        },
                    }
                    let wait = backoff.after_failure();
                    tokio::select! {
                        () = &mut polling => return,
                        () = tokio::time::sleep(wait) => {}
                    }
                }
            };
            throttled!(lines = 4; info, feed = %target.addr, "following the master's change feed; polling stops");
            told = false;
            upstream.set_feed(true);
            upstream.set_up();
            let lost = tokio::select! {
                lost = self.follow(opened, &mut list) => lost,
                () = cancel.cancelled() => {
                    upstream.set_feed(false);
                    return;
                }
            };
            upstream.set_feed(false);
            first_wait = if lost.is_silence() || lost.is_misbehaviour() {
                backoff.after_no_answer()
            } else {
                backoff.succeeded();
                Duration::ZERO
            };
            if matches!(lost, FeedError::Discarded | FeedError::Unfollowed(_)) {
                // A delta was skipped, or the published list cannot take
                // the feed's deltas: start again from a snapshot (a list
                // that was not taken is dropped already).
                list = None;
            }
            if lost.is_silence() {
                if let FeedError::Master(reason) = &lost {
                    upstream.set_down(reason);
                }
            }
            throttled!(lines = 4; info, feed = %target.addr, reason = %cut(&lost), "lost the master's change feed; polling until it is back");
        }
    }

    /// Connects, subscribes (continuing `list` if there is one) and waits
    /// for the feed's first list message.
    async fn open(&self, list: Option<&FollowedList>) -> Result<Opened, FeedError> {
        let (target, config) = (&self.target, &self.config);
        let mut framed = connect(&target.addr, config.master_timeout).await?;
        let subscribe = FeedSubscribe {
            token: target.token.as_ref().map(|t| t.expose().to_owned()),
            resume: list.map(FollowedList::resume),
            heartbeat_ms: Some(heartbeat_ms(config)),
        };
        match tokio::time::timeout(
            config.master_timeout,
            framed.send(subscribe.to_json().as_bytes()),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(MasterError::Write(e).into()),
            Err(_) => return Err(MasterError::NotReading.into()),
        }
        let deadline = Instant::now() + config.master_timeout;
        let first = match tokio::time::timeout_at(deadline, framed.next()).await {
            Err(_) => return Err(MasterError::NoAnswer(config.master_timeout).into()),
            Ok(None) => return Err(MasterError::Closed.into()),
            Ok(Some(Err(e))) => return Err(MasterError::Read(e).into()),
            Ok(Some(Ok(Frame::Discarded(_)))) => return Err(FeedError::NotAFeed),
            Ok(Some(Ok(Frame::Message(json)))) => json,
        };
        let text = std::str::from_utf8(&first).unwrap_or_default();
        match command(text).as_deref() {
            Some(protocol::bridge::names::SNAPSHOT | protocol::bridge::names::DELTA) => {
                Ok(Opened { framed, first })
            }
            Some(feed::names::REFUSED) => Err(refusal(&first)),
            _ => Err(FeedError::NotAFeed),
        }
    }

    /// Applies the feed's frames as they come and publishes what they
    /// changed after each batch (a snapshot ends its batch, so the deltas
    /// after it are passed on); returns why the feed was lost.
    async fn follow(&self, opened: Opened, list: &mut Option<FollowedList>) -> FeedError {
        let (upstream, config) = (&self.upstream, &self.config);
        let Opened { mut framed, first } = opened;
        let mut next = Some(first);
        loop {
            let mut batch = Batch::default();
            let mut ended = None;
            for _ in 0..MAX_BATCH {
                let Some(json) = next.take() else { break };
                if let Err(e) = apply(upstream, &json, list, &mut batch) {
                    ended = Some(e);
                    break;
                }
                if batch.whole.is_some() {
                    break;
                }
                // Whatever else has arrived joins this batch.
                match framed.next().now_or_never() {
                    None => break,
                    Some(frame) => match read(frame) {
                        Ok(json) => next = Some(json),
                        Err(e) => {
                            ended = Some(e);
                            break;
                        }
                    },
                }
            }
            // A list dropped by an error publishes nothing of its batch.
            let published = match list {
                Some(_) => batch.publish(upstream),
                None => Ok(()),
            };
            // Deltas the published list did not take leave it behind the
            // ledger: that, before any other reason, needs a snapshot.
            if let Err(e) = published {
                return e.into();
            }
            if let Some(e) = ended {
                return e;
            }
            if next.is_some() {
                continue;
            }
            next = match tokio::time::timeout(config.master_timeout, framed.next()).await {
                Err(_) => return MasterError::NoAnswer(config.master_timeout).into(),
                Ok(frame) => match read(frame) {
                    Ok(json) => Some(json),
                    Err(e) => return e,
                },
            };
        }
    }
}

/// How often the master is asked to write when nothing changes: three
/// heartbeats within the master timeout, so one late one is not a loss.
fn heartbeat_ms(config: &Config) -> u64 {
    u64::try_from(config.master_timeout.as_millis() / 3).unwrap_or(u64::MAX)
}

/// What one batch of the feed's messages did to the list.
#[derive(Default)]
struct Batch {
    /// A snapshot's servers (its last message): the list replaced whole,
    /// published whole.
    whole: Option<Vec<Keyed>>,
    /// The deltas' changes, in the master's ids, in order (none after a
    /// snapshot).
    changes: Vec<Changeset>,
}

impl Batch {
    /// Publishes what the batch did: a snapshot's list whole, or its
    /// deltas passed on. [`Unfollowed`] when the published list cannot
    /// take the deltas (they do not fit how a master numbers its list;
    /// nothing published: only a snapshot, which the ledger does not
    /// hold, can bring it back). A batch that changed
    /// nothing (heartbeats) publishes nothing.
    fn publish(self, upstream: &Upstream) -> Result<(), Unfollowed> {
        let asked = Instant::now();
        match self.whole {
            Some(servers) => upstream.follow(servers, asked),
            None if !self.changes.is_empty() => upstream.pass_on(self.changes, asked)?,
            None => {}
        }
        Ok(())
    }
}

/// A message from the feed's stream, or why the stream is of no more use.
fn read(frame: Option<Result<Frame, std::io::Error>>) -> Result<Bytes, FeedError> {
    match frame {
        None => Err(MasterError::Closed.into()),
        Some(Err(e)) => Err(MasterError::Read(e).into()),
        // A list the bridge cannot read leaves a gap: start over.
        Some(Ok(Frame::Discarded(_))) => Err(FeedError::Discarded),
        Some(Ok(Frame::Message(json))) => Ok(json),
    }
}

/// Applies one message to `list`, counts it, and notes what it changed in
/// `batch`.
fn apply(
    upstream: &Upstream,
    json: &Bytes,
    list: &mut Option<FollowedList>,
    batch: &mut Batch,
) -> Result<(), FeedError> {
    let Some(taken) = take_message(json, list)? else {
        return Ok(());
    };
    upstream.count_feed(&taken);
    match taken {
        Taken::Snapshot(servers) => {
            batch.whole = Some(servers);
            batch.changes.clear();
        }
        Taken::Delta(Some(change)) => batch.changes.push(change),
        Taken::Delta(None) => {}
    }
    Ok(())
}

/// Takes one message (JSON, unframed) of a master's change feed into
/// `list`, as the bridge does with every message its feed sends: each
/// entry checked against the master protocol's rules, the list bounded by
/// [`MAX_MASTER_REPLY`] like a polled reply. `None`: a message of another
/// command, ignored (a later master may send more). After an error the
/// list is `None` when it no longer matches the master's.
pub fn take_message(
    json: &[u8],
    list: &mut Option<FollowedList>,
) -> Result<Option<Taken>, FeedError> {
    take_message_within(json, list, MAX_MASTER_REPLY)
}

/// [`take_message`] with another bound on the list's size: the fuzz
/// target that feeds it hostile frames reaches a small bound often.
pub fn take_message_within(
    json: &[u8],
    list: &mut Option<FollowedList>,
    max_bytes: usize,
) -> Result<Option<Taken>, FeedError> {
    let text = std::str::from_utf8(json).map_err(|_| FeedError::Unreadable)?;
    let Some(command) = command(text) else {
        return Err(FeedError::Unreadable);
    };
    match DeltaMessage::from_frame(&command, text) {
        Some(Ok(message)) => Ok(Some(FollowedList::take(list, message, max_bytes)?)),
        Some(Err(_)) => Err(FeedError::Unreadable),
        None if command == feed::names::REFUSED => Err(refusal(json)),
        None => Ok(None),
    }
}

/// A message's `command`: found in front of a snapshot or a delta as the
/// master writes them (the frame is then read once, into its message),
/// read without building the rest of the message otherwise.
fn command(text: &str) -> Option<Cow<'static, str>> {
    const FEED: [&str; 2] = [
        protocol::bridge::names::DELTA,
        protocol::bridge::names::SNAPSHOT,
    ];
    if let Some(name) = protocol::message::leading_command(text, &FEED) {
        return Some(Cow::Borrowed(name));
    }
    #[derive(serde::Deserialize)]
    struct Head {
        command: String,
    }
    serde_json::from_str::<Head>(text)
        .ok()
        .map(|h| Cow::Owned(h.command))
}

/// The error for a `feedRefused`.
fn refusal(json: &[u8]) -> FeedError {
    let content = protocol::message::Envelope::parse(json)
        .ok()
        .and_then(|e| e.content);
    match FeedRefusal::from_content(content.as_ref()) {
        Some(reason) => FeedError::Refused(reason),
        None => FeedError::RefusedOther,
    }
}
