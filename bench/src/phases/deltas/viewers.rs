//! The viewers the deltas phase times: delta subscribers that count the
//! bytes they receive, and one whole-list subscriber beside them.

use std::{
    future::Future,
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, Ordering::Relaxed},
        Arc,
    },
    time::Duration,
};

use futures_util::StreamExt;
use tokio_tungstenite::tungstenite::Message;

use super::list::Listed;
use crate::{
    direct::REPLY_PREFIX,
    error::{Error, Result},
    phases::crowd::{Crowd, Member},
    ws,
};

const SNAPSHOT_PREFIX: &str = r#"{"command":"bridgeSnapshot""#;
const DELTA_PREFIX: &str = r#"{"command":"bridgeDelta""#;

/// How a viewer subscribes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// `{"deltas":true,"epoch":E,"since":N}`: a page that loaded list N
    /// from `/api/servers` first.
    Deltas,
    /// Plain `bridgeSubscribe`: whole lists.
    Whole,
}

/// What a group of viewers received, summed over the group.
#[derive(Debug, Default)]
pub(super) struct Counts {
    /// Bytes read from the sockets (frames, headers and pings included).
    pub(super) bytes: AtomicU64,
    /// Text messages after the first answer to the subscribe.
    pub(super) messages: AtomicU64,
    /// `bridgeSnapshot`s after the first answer (a delta viewer fell back).
    pub(super) snapshots: AtomicU64,
}

impl Mode {
    /// Names the viewers in errors.
    fn viewers(self) -> &'static str {
        match self {
            Self::Deltas => "delta viewers",
            Self::Whole => "whole-list viewers",
        }
    }
}

/// A group of subscribed viewers; delta viewers report when they see each
/// round's marker.
pub(super) struct Viewers {
    crowd: Crowd,
    pub(super) counts: Arc<Counts>,
}

impl Viewers {
    pub(super) async fn open(
        bridge: SocketAddr,
        count: usize,
        mode: Mode,
        subscribe: &str,
    ) -> Result<Self> {
        let counts = Arc::new(Counts::default());
        let subscribe: Arc<str> = subscribe.into();
        let crowd = Crowd::open(count, mode.viewers(), |member| {
            viewer(bridge, mode, subscribe.clone(), counts.clone(), member)
        })
        .await?;
        Ok(Self { crowd, counts })
    }

    /// See [`Crowd::round`].
    pub(super) async fn round(
        &mut self,
        id: u64,
        current: u64,
        change: impl Future<Output = Result<()>>,
    ) -> Result<Vec<Duration>> {
        self.crowd.round(id, current, change).await
    }

    pub(super) fn check(&self) -> Result<()> {
        self.crowd.check()
    }

    pub(super) async fn close(self) {
        self.crowd.close().await;
    }
}

/// One viewer's task: subscribes with `subscribe`, then adds what it
/// receives to `counts`.
async fn viewer(
    bridge: SocketAddr,
    mode: Mode,
    subscribe: Arc<str>,
    counts: Arc<Counts>,
    mut member: Member,
) -> Result<()> {
    let permit = member.connecting().await;
    let read = Arc::new(AtomicU64::new(0));
    let mut socket = ws::connect_counted(bridge, read.clone()).await?;
    ws::send(&mut socket, &subscribe).await?;
    let first: &[&str] = match mode {
        Mode::Deltas => &[SNAPSHOT_PREFIX, DELTA_PREFIX],
        Mode::Whole => &[REPLY_PREFIX],
    };
    loop {
        let text = ws::next_text(&mut socket).await?;
        if first.iter().any(|p| text.as_str().starts_with(p)) {
            break;
        }
    }
    drop(permit);
    // Count from here on; the group's total is read around each window.
    let mut counted = read.load(Relaxed);
    counts.bytes.fetch_add(counted, Relaxed);
    member.ready();
    let stop = member.stop().clone();
    loop {
        let msg = tokio::select! {
            () = stop.cancelled() => return Ok(()),
            msg = socket.next() => msg,
        };
        let now = read.load(Relaxed);
        counts.bytes.fetch_add(now - counted, Relaxed);
        counted = now;
        match msg {
            Some(Ok(Message::Text(text))) => {
                counts.messages.fetch_add(1, Relaxed);
                if text.as_str().starts_with(SNAPSHOT_PREFIX) {
                    counts.snapshots.fetch_add(1, Relaxed);
                }
                if mode == Mode::Deltas {
                    member.saw(text.as_str()).await;
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => return Err(Error::Unexpected("bridge closed a viewer".into())),
        }
    }
}

pub(crate) fn subscribe_json(l: &Listed) -> String {
    format!(
        r#"{{"command":"bridgeSubscribe","content":{{"deltas":true,"epoch":"{}","since":{}}}}}"#,
        l.epoch, l.seq
    )
}
