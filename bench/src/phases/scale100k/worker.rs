//! A worker process of the 100,000-viewer run: one process may hold no more
//! sockets than its file-descriptor limit (20,000 here, and the hard limit
//! cannot be raised without `CAP_SYS_RESOURCE`), so `loadgen` starts one
//! worker per bridge (`loadgen --scale-worker`) and steers it over its
//! stdin and stdout, one line each way:
//!
//! - in: the [`Spec`] as JSON; out: `ready` once every viewer subscribed;
//! - in: `check`; out: `ok` (no viewer failed);
//! - in: `arm ID CURRENT`; out: `armed ID` once the viewers look for the
//!   marker, then `seen ID T,T,…`: when each viewer saw it, in µs of
//!   `CLOCK_MONOTONIC`, which every process on the machine shares, so the
//!   coordinator subtracts the time it made the change;
//! - in: `close`; out: `closed`, then the worker exits.
//!
//! Any failure is one line `failed WHY`.

use std::{
    io::Write,
    net::{Ipv4Addr, SocketAddr},
    sync::{
        atomic::{AtomicUsize, Ordering::Relaxed},
        Arc,
    },
};

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::{
    error::{Error, Result},
    phases::crowd::{Crowd, Member},
    ws,
};

const SNAPSHOT_PREFIX: &str = r#"{"command":"bridgeSnapshot""#;
const DELTA_PREFIX: &str = r#"{"command":"bridgeDelta""#;

/// What one worker opens.
#[derive(Debug, Clone)]
pub(super) struct Spec {
    /// The bridge its viewers connect to.
    pub(super) bridge: SocketAddr,
    /// What each viewer sends first (a delta subscribe naming the list's
    /// epoch and seq).
    pub(super) subscribe: String,
    /// The index of its first viewer in the whole run, and how many.
    pub(super) first: usize,
    pub(super) count: usize,
    /// Viewers per source address, counted over the whole run.
    pub(super) per_source: usize,
}

impl Spec {
    pub(super) fn to_json(&self) -> String {
        serde_json::json!({
            "bridge": self.bridge.to_string(),
            "subscribe": self.subscribe,
            "first": self.first,
            "count": self.count,
            "perSource": self.per_source,
        })
        .to_string()
    }

    fn from_json(line: &str) -> Result<Self> {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let field = |k: &str| {
            v[k].as_u64()
                .map(|n| n as usize)
                .ok_or_else(|| Error::Unexpected(format!("worker spec lacks {k}")))
        };
        Ok(Self {
            bridge: v["bridge"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| Error::Unexpected("worker spec lacks bridge".into()))?,
            subscribe: v["subscribe"]
                .as_str()
                .ok_or_else(|| Error::Unexpected("worker spec lacks subscribe".into()))?
                .to_owned(),
            first: field("first")?,
            count: field("count")?,
            per_source: field("perSource")?.max(1),
        })
    }
}

/// Viewer `i`'s source address: a new one every `per_source` viewers,
/// from 127.0.0.2 upwards.
pub(super) fn source(i: usize, per_source: usize) -> Ipv4Addr {
    let a = 2 + i / per_source;
    Ipv4Addr::new(127, 0, (a >> 8) as u8, (a & 0xff) as u8)
}

/// Now on `CLOCK_MONOTONIC`, in µs: the same clock in every process.
pub(super) fn monotonic_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only the timespec it is given.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    (ts.tv_sec as u64) * 1_000_000 + (ts.tv_nsec as u64) / 1_000
}

/// One line to the coordinator.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// One delta viewer from `source`: subscribes as a page that loaded the
/// list first, then reports each round's change when it sees it.
async fn viewer(
    bridge: SocketAddr,
    source: Ipv4Addr,
    subscribe: Arc<str>,
    member: Member,
) -> Result<()> {
    let permit = member.connecting().await;
    let mut socket = ws::connect_from(bridge, source).await?;
    ws::send(&mut socket, &subscribe).await?;
    loop {
        let text = ws::next_text(&mut socket).await?;
        if text.as_str().starts_with(SNAPSHOT_PREFIX) || text.as_str().starts_with(DELTA_PREFIX) {
            break;
        }
    }
    drop(permit);
    member.watch(&mut socket).await
}

/// The worker's side (`loadgen --scale-worker`): reads its spec, opens its
/// viewers, and answers the coordinator until `close` or the end of stdin.
pub async fn worker() -> Result<()> {
    let result = serve().await;
    if let Err(e) = &result {
        say(&format!("failed {e}"));
    }
    result
}

async fn serve() -> Result<()> {
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let spec = match stdin.next_line().await? {
        Some(line) => Spec::from_json(&line)?,
        None => return Err(Error::Unexpected("no worker spec on stdin".into())),
    };
    let subscribe: Arc<str> = spec.subscribe.as_str().into();
    let next = AtomicUsize::new(spec.first);
    let mut crowd = Crowd::open(spec.count, "scale viewers", |member| {
        let i = next.fetch_add(1, Relaxed);
        viewer(
            spec.bridge,
            source(i, spec.per_source),
            subscribe.clone(),
            member,
        )
    })
    .await?;
    say("ready");
    while let Some(line) = stdin.next_line().await? {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["check"] => {
                crowd.check()?;
                say("ok");
            }
            ["arm", id, current] => {
                let (Ok(id), Ok(current)) = (id.parse::<u64>(), current.parse::<u64>()) else {
                    return Err(Error::Unexpected(format!("bad command {line:?}")));
                };
                let armed = monotonic_us();
                let got = crowd
                    .round(id, current, async {
                        say(&format!("armed {id}"));
                        Ok(())
                    })
                    .await?;
                let seen: Vec<String> = got
                    .iter()
                    .map(|d| (armed + d.as_micros() as u64).to_string())
                    .collect();
                say(&format!("seen {id} {}", seen.join(",")));
            }
            ["close"] => break,
            _ => return Err(Error::Unexpected(format!("bad command {line:?}"))),
        }
    }
    crowd.close().await;
    say("closed");
    Ok(())
}
