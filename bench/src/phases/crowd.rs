//! Crowds of subscribed viewers that time how long a change takes to reach
//! each of them: the fan-out, scale-out and deltas phases differ only in how
//! a viewer connects and subscribes, so the rounds live here once.

use std::{
    future::Future,
    sync::{
        atomic::{AtomicUsize, Ordering::Relaxed},
        Arc,
    },
    time::{Duration, Instant},
};

use futures_util::StreamExt;
use hdrhistogram::Histogram;
use tokio::{
    sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore},
    task::JoinHandle,
};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use crate::{
    direct,
    error::{within, within_for, Error, Result},
    report::{count, histogram, ms, q, record},
    ws,
};

/// Viewers connecting at once: thousands of handshakes in one burst
/// overflow the loopback backlog.
const CONNECTING: usize = 64;

/// One change the viewers wait for: the text that marks it.
#[derive(Debug, Clone)]
struct Round {
    id: u64,
    marker: Arc<str>,
    start: Instant,
}

/// A group of viewer tasks, each started with a [`Member`]; it announces
/// rounds and collects every viewer's delay until it saw the change.
pub(crate) struct Crowd {
    rounds: watch::Sender<Option<Round>>,
    reports: mpsc::Receiver<(u64, Duration)>,
    errors: Arc<AtomicUsize>,
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    count: usize,
    /// Names the viewers in errors (`subscribed viewers`).
    what: String,
}

/// A viewer's side of its [`Crowd`]: the rounds to look for, where to
/// report them, and the crowd's stop signal.
pub(crate) struct Member {
    rounds: watch::Receiver<Option<Round>>,
    reports: mpsc::Sender<(u64, Duration)>,
    last: u64,
    ready: Arc<AtomicUsize>,
    connecting: Arc<Semaphore>,
    stop: CancellationToken,
}

impl Member {
    /// Waits for a turn to connect; hold the permit until subscribed.
    pub(crate) async fn connecting(&self) -> Option<OwnedSemaphorePermit> {
        self.connecting.clone().acquire_owned().await.ok()
    }

    /// Tells the crowd this viewer is subscribed.
    pub(crate) fn ready(&self) {
        self.ready.fetch_add(1, Relaxed);
    }

    /// Cancelled when the crowd closes: the viewer should return `Ok`.
    pub(crate) fn stop(&self) -> &CancellationToken {
        &self.stop
    }

    /// Reports the current round once when `text` carries its marker.
    pub(crate) async fn saw(&mut self, text: &str) {
        let round = self.rounds.borrow().clone();
        if let Some(r) = round {
            if r.id != self.last && text.contains(&*r.marker) {
                self.last = r.id;
                let _ = self.reports.send((r.id, r.start.elapsed())).await;
            }
        }
    }

    /// Tells the crowd this viewer is subscribed, then reports every round
    /// it sees on `socket` until the crowd closes (`Ok`, even when the
    /// sockets are cut at once: the bridge or nginx stopping) or the bridge
    /// closes the socket first (an error).
    pub(crate) async fn watch(mut self, socket: &mut ws::Ws) -> Result<()> {
        self.ready();
        let stop = self.stop.clone();
        loop {
            let msg = tokio::select! {
                biased;
                () = stop.cancelled() => return Ok(()),
                msg = socket.next() => msg,
            };
            match msg {
                Some(Ok(Message::Text(text))) => self.saw(text.as_str()).await,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => return Err(Error::Unexpected("bridge closed a viewer".into())),
            }
        }
    }
}

impl Crowd {
    /// Starts `count` viewers, `viewer` run once for each, and waits until
    /// every one is [`Member::ready`]; fails if any of them failed.
    pub(crate) async fn open<F, Fut>(count: usize, what: &str, viewer: F) -> Result<Self>
    where
        F: Fn(Member) -> Fut,
        Fut: Future<Output = Result<()>> + Send + 'static,
    {
        let (rounds, rounds_rx) = watch::channel(None::<Round>);
        let (tx, reports) = mpsc::channel(count * 2 + 16);
        let ready = Arc::new(AtomicUsize::new(0));
        let errors = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let connecting = Arc::new(Semaphore::new(CONNECTING));
        let mut tasks = Vec::with_capacity(count);
        for _ in 0..count {
            let run = viewer(Member {
                rounds: rounds_rx.clone(),
                reports: tx.clone(),
                last: 0,
                ready: ready.clone(),
                connecting: connecting.clone(),
                stop: stop.clone(),
            });
            let (errors, what) = (errors.clone(), what.to_owned());
            tasks.push(tokio::spawn(async move {
                if let Err(e) = run.await {
                    if errors.fetch_add(1, Relaxed) == 0 {
                        eprintln!("[loadgen] one of the {what} failed: {e}");
                    }
                }
            }));
        }
        let crowd = Self {
            rounds,
            reports,
            errors,
            stop,
            tasks,
            count,
            what: what.to_owned(),
        };
        // A full run subscribes thousands of viewers.
        within_for(
            Duration::from_secs(300),
            format!("{what} subscribed"),
            async {
                while ready.load(Relaxed) + crowd.errors.load(Relaxed) < count {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Ok(())
            },
        )
        .await?;
        if crowd.errors.load(Relaxed) > 0 {
            let failed = crowd.errors.load(Relaxed);
            crowd.close().await;
            return Err(Error::Unexpected(format!(
                "{failed} of {count} {what} could not subscribe"
            )));
        }
        Ok(crowd)
    }

    /// Announces round `id` (marked by `current` players), makes the change
    /// with `change`, and returns each viewer's delay until it saw it.
    pub(crate) async fn round(
        &mut self,
        id: u64,
        current: u64,
        change: impl Future<Output = Result<()>>,
    ) -> Result<Vec<Duration>> {
        self.rounds.send_replace(Some(Round {
            id,
            marker: direct::marker(current).into(),
            start: Instant::now(),
        }));
        change.await?;
        let mut got = Vec::with_capacity(self.count);
        within(format!("change {id} seen by all {}", self.what), async {
            while got.len() < self.count {
                match self.reports.recv().await {
                    Some((round, d)) if round == id => got.push(d),
                    Some(_) => {}
                    None => return Err(Error::Unexpected("viewers gone".into())),
                }
            }
            Ok(())
        })
        .await?;
        self.check()?;
        Ok(got)
    }

    /// Fails if any viewer has failed since the crowd opened.
    pub(crate) fn check(&self) -> Result<()> {
        match self.errors.load(Relaxed) {
            0 => Ok(()),
            n => Err(Error::Unexpected(format!("{n} {} failed", self.what))),
        }
    }

    /// Stops every viewer and waits until each has left: only then may the
    /// bridge stop, or viewers still reading would report it closing them.
    pub(crate) async fn close(self) {
        self.stop.cancel();
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// Latencies of several rounds: all samples, and the slowest viewer of each.
pub(crate) struct Rounds {
    pub(crate) each: Histogram<u64>,
    worst: Duration,
}

impl Rounds {
    pub(crate) fn new() -> Self {
        Self {
            each: histogram(),
            worst: Duration::ZERO,
        }
    }

    pub(crate) fn add(&mut self, got: &[Duration]) {
        for d in got {
            record(&mut self.each, *d);
            self.worst = self.worst.max(*d);
        }
    }

    pub(crate) fn summary(&self, viewers: usize) -> String {
        format!(
            "p50 {} / p99 {}; all {} had it within {}",
            q(&self.each, 0.5),
            q(&self.each, 0.99),
            count(viewers as u64),
            ms(self.worst.as_micros() as u64)
        )
    }
}
