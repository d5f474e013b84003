//! The list from a master elsewhere: one TCP connection that asks for the
//! list every `--poll-interval`, reconnecting with [`Backoff`] while the
//! master cannot be reached.

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use protocol::{
    codec::{Frame, FrameCodec},
    is_query_reply, Command,
};
use tokio::{
    net::TcpStream,
    time::{Instant, MissedTickBehavior},
};
use tokio_util::{codec::Framed, sync::CancellationToken};
use tracing::debug;

use super::{backoff::Backoff, connect, Upstream};
use crate::{config::Config, error::MasterError};

/// How one connection to the master ended.
struct Lost {
    reason: MasterError,
    /// Whether the master answered at least one query on it.
    answered: bool,
}

/// The polling mode: a remote master asked for its list every
/// `--poll-interval` (alone with `--master-feed off`, or by the
/// [`super::Subscriber`] while the feed cannot be followed). While it
/// polls, an admin's command is followed by the bridge's query for the
/// list, and the lists admins' own connections read are published too
/// ([`Upstream::offer_admin_list`]).
#[derive(Debug, Clone)]
pub struct Poller {
    upstream: Arc<Upstream>,
    config: Arc<Config>,
}

impl Poller {
    /// Polls the master `config` names into `upstream` once run; admins'
    /// lists are wanted from now on.
    pub fn new(upstream: Arc<Upstream>, config: Arc<Config>) -> Self {
        upstream.set_polled(true);
        Self { upstream, config }
    }

    /// Polls the master until `cancel` fires. A lost connection that had
    /// answered is retried at once and the master counts as down only when
    /// that retry fails (or when it stopped answering); a master that
    /// accepts but never answers readably is down and retried with backoff.
    pub async fn run(&self, cancel: CancellationToken) {
        let (upstream, config) = (&self.upstream, &self.config);
        let mut backoff = Backoff::new(config.reconnect_min, config.reconnect_max);
        loop {
            let connected = tokio::select! {
                c = connect(&config.master, config.master_timeout) => c,
                () = cancel.cancelled() => return,
            };
            let wait = match connected {
                Err(reason) => {
                    upstream.set_down(&reason);
                    backoff.after_failure()
                }
                Ok(framed) => {
                    debug!(master = %config.master, "shared upstream connected");
                    let lost = tokio::select! {
                        lost = self.queries(framed) => lost,
                        () = cancel.cancelled() => return,
                    };
                    debug!(reason = %lost.reason, "shared upstream lost the master");
                    if lost.answered {
                        backoff.succeeded();
                        // A master that stopped answering is down already;
                        // one that closed is down only if reconnecting fails.
                        if lost.reason.is_silence() {
                            upstream.set_down(&lost.reason);
                        }
                        continue;
                    }
                    upstream.set_down(&lost.reason);
                    backoff.after_no_answer()
                }
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => return,
            }
        }
    }

    /// Queries over one connection every `poll_interval` until it fails.
    async fn queries(&self, mut framed: Framed<TcpStream, FrameCodec>) -> Lost {
        let mut answered = false;
        let mut tick = tokio::time::interval(self.config.poll_interval);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            if let Err(reason) = self.query(&mut framed).await {
                return Lost { reason, answered };
            }
            answered = true;
            // Wait for the next tick; notice a closed connection meanwhile
            // instead of at the next query.
            tick.reset();
            if let Err(reason) = idle_until(&mut tick, &mut framed).await {
                return Lost { reason, answered };
            }
        }
    }

    /// Sends one query and publishes its answer.
    async fn query(&self, framed: &mut Framed<TcpStream, FrameCodec>) -> Result<(), MasterError> {
        let (upstream, config) = (&self.upstream, &self.config);
        upstream.count_query();
        let query = Command::Query.to_json();
        // Taken just before the write: see `Upstream::offer` for the ordering.
        let asked = Instant::now();
        match tokio::time::timeout(config.master_timeout, framed.send(query.as_bytes())).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(MasterError::Write(e)),
            Err(_) => return Err(MasterError::NotReading),
        }
        let deadline = Instant::now() + config.master_timeout;
        loop {
            match tokio::time::timeout_at(deadline, framed.next()).await {
                Err(_) => return Err(MasterError::NoAnswer(config.master_timeout)),
                Ok(None) => return Err(MasterError::Closed),
                Ok(Some(Err(e))) => return Err(MasterError::Read(e)),
                Ok(Some(Ok(Frame::Discarded(_)))) => {}
                Ok(Some(Ok(Frame::Message(json)))) if is_query_reply(&json) => {
                    upstream.set_up();
                    upstream.offer(&json, asked);
                    return Ok(());
                }
                Ok(Some(Ok(Frame::Message(_)))) => {}
            }
        }
    }
}

/// Reads (and ignores) whatever the master sends until the next tick.
async fn idle_until(
    tick: &mut tokio::time::Interval,
    framed: &mut Framed<TcpStream, FrameCodec>,
) -> Result<(), MasterError> {
    loop {
        tokio::select! {
            _ = tick.tick() => return Ok(()),
            frame = framed.next() => match frame {
                None => return Err(MasterError::Closed),
                Some(Err(e)) => return Err(MasterError::Read(e)),
                Some(Ok(_)) => {}
            },
        }
    }
}
