//! Deltas (protocol §2.1) with the master inside the bridge: what one
//! viewer receives per second while one of 10,000 servers changes every
//! 200 ms, how long a game server's change takes to reach thousands of
//! delta viewers, what the bridge's CPU pays for them, and how many bytes
//! the first load (`/api/servers`, compressed) moves.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed},
        Arc,
    },
    time::{Duration, Instant},
};

use futures_util::{SinkExt, StreamExt};
use hdrhistogram::Histogram;
use tokio::sync::{mpsc, watch, Semaphore};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use crate::{
    direct::{self, Conn, REPLY_PREFIX},
    error::{within, Error, Result},
    phases::Env,
    procs::{self, BridgeOptions},
    report::{count, histogram, ms, q, record, times, Row, Verdict},
    ws::{self, CountedWs},
};

const SNAPSHOT_PREFIX: &str = r#"{"command":"bridgeSnapshot""#;
const DELTA_PREFIX: &str = r#"{"command":"bridgeDelta""#;

/// Markers of the measured changes: far above the churn's player counts.
const MARKER_BASE: u64 = 20_000;

/// One change the viewers wait for: the text that marks it.
#[derive(Debug, Clone)]
struct Round {
    id: u64,
    marker: Arc<str>,
    start: Instant,
}

/// How a viewer subscribes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `{"deltas":true,"epoch":E,"since":N}`: a page that loaded list N
    /// from `/api/servers` first.
    Deltas,
    /// Plain `bridgeSubscribe`: whole lists, as before deltas.
    Whole,
}

/// What a group of viewers received, summed over the group.
#[derive(Debug, Default)]
struct Counts {
    /// Bytes read from the sockets (frames, headers and pings included).
    bytes: AtomicU64,
    /// Text messages after the first answer to the subscribe.
    messages: AtomicU64,
    /// `bridgeSnapshot`s after the first answer (a delta viewer fell back).
    snapshots: AtomicU64,
}

/// A group of subscribed viewers; delta viewers report when they see each
/// round's marker.
struct Viewers {
    rounds: watch::Sender<Option<Round>>,
    reports: mpsc::Receiver<(u64, Duration)>,
    counts: Arc<Counts>,
    errors: Arc<AtomicUsize>,
    stop: CancellationToken,
    count: usize,
}

impl Viewers {
    async fn open(bridge: SocketAddr, count: usize, mode: Mode, subscribe: &str) -> Result<Self> {
        let (rounds, rounds_rx) = watch::channel(None::<Round>);
        let (tx, reports) = mpsc::channel(count * 2 + 16);
        let ready = Arc::new(AtomicUsize::new(0));
        let errors = Arc::new(AtomicUsize::new(0));
        let counts = Arc::new(Counts::default());
        let stop = CancellationToken::new();
        let connecting = Arc::new(Semaphore::new(64));
        let subscribe: Arc<str> = subscribe.into();
        for _ in 0..count {
            let task = Viewer {
                bridge,
                mode,
                subscribe: subscribe.clone(),
                rounds: rounds_rx.clone(),
                reports: tx.clone(),
                ready: ready.clone(),
                counts: counts.clone(),
                connecting: connecting.clone(),
                stop: stop.clone(),
            };
            let errors = errors.clone();
            tokio::spawn(async move {
                if let Err(e) = task.run().await {
                    if errors.fetch_add(1, Relaxed) == 0 {
                        eprintln!("[loadgen] {mode:?} viewer failed: {e}");
                    }
                }
            });
        }
        within(Duration::from_secs(300), "viewers subscribed", async {
            while ready.load(Relaxed) + errors.load(Relaxed) < count {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(())
        })
        .await?;
        if errors.load(Relaxed) > 0 {
            stop.cancel();
            return Err(Error::Unexpected(format!(
                "{} of {count} {mode:?} viewers could not subscribe",
                errors.load(Relaxed)
            )));
        }
        Ok(Self {
            rounds,
            reports,
            counts,
            errors,
            stop,
            count,
        })
    }

    /// Announces round `id` (marked by `current` players), makes the change
    /// with `change`, and returns each viewer's delay until it saw it.
    async fn round(
        &mut self,
        id: u64,
        current: u64,
        change: impl std::future::Future<Output = Result<()>>,
    ) -> Result<Vec<Duration>> {
        self.rounds.send_replace(Some(Round {
            id,
            marker: direct::marker(current).into(),
            start: Instant::now(),
        }));
        change.await?;
        let mut got = Vec::with_capacity(self.count);
        within(
            Duration::from_secs(30),
            format!("change {id} seen by all delta viewers"),
            async {
                while got.len() < self.count {
                    match self.reports.recv().await {
                        Some((round, d)) if round == id => got.push(d),
                        Some(_) => {}
                        None => return Err(Error::Unexpected("viewers gone".into())),
                    }
                }
                Ok(())
            },
        )
        .await?;
        self.check()?;
        Ok(got)
    }

    fn check(&self) -> Result<()> {
        match self.errors.load(Relaxed) {
            0 => Ok(()),
            n => Err(Error::Unexpected(format!("{n} subscribed viewers failed"))),
        }
    }

    fn close(self) {
        self.stop.cancel();
    }
}

/// One viewer's task.
struct Viewer {
    bridge: SocketAddr,
    mode: Mode,
    subscribe: Arc<str>,
    rounds: watch::Receiver<Option<Round>>,
    reports: mpsc::Sender<(u64, Duration)>,
    ready: Arc<AtomicUsize>,
    counts: Arc<Counts>,
    connecting: Arc<Semaphore>,
    stop: CancellationToken,
}

impl Viewer {
    async fn run(self) -> Result<()> {
        let permit = self.connecting.clone().acquire_owned().await;
        let read = Arc::new(AtomicU64::new(0));
        let mut socket = ws::connect_counted(self.bridge, read.clone()).await?;
        socket.send(Message::text(&*self.subscribe)).await?;
        let first: &[&str] = match self.mode {
            Mode::Deltas => &[SNAPSHOT_PREFIX, DELTA_PREFIX],
            Mode::Whole => &[REPLY_PREFIX],
        };
        loop {
            let text = next_text(&mut socket).await?;
            if first.iter().any(|p| text.starts_with(p)) {
                break;
            }
        }
        drop(permit);
        // Count from here on; the group's total is read around each window.
        let mut counted = read.load(Relaxed);
        self.counts.bytes.fetch_add(counted, Relaxed);
        self.ready.fetch_add(1, Relaxed);
        let mut last = 0;
        loop {
            let msg = tokio::select! {
                () = self.stop.cancelled() => return Ok(()),
                msg = socket.next() => msg,
            };
            let now = read.load(Relaxed);
            self.counts.bytes.fetch_add(now - counted, Relaxed);
            counted = now;
            match msg {
                Some(Ok(Message::Text(text))) => {
                    self.counts.messages.fetch_add(1, Relaxed);
                    if text.as_str().starts_with(SNAPSHOT_PREFIX) {
                        self.counts.snapshots.fetch_add(1, Relaxed);
                    }
                    if self.mode == Mode::Whole {
                        continue;
                    }
                    let round = self.rounds.borrow().clone();
                    if let Some(r) = round {
                        if r.id != last && text.as_str().contains(&*r.marker) {
                            last = r.id;
                            let _ = self.reports.send((r.id, r.start.elapsed())).await;
                        }
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => return Err(Error::Unexpected("bridge closed a viewer".into())),
            }
        }
    }
}

async fn next_text(ws: &mut CountedWs) -> Result<String> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => return Ok(t.as_str().to_owned()),
            Some(Ok(Message::Close(frame))) => {
                return Err(Error::Unexpected(format!(
                    "bridge closed the socket: {frame:?}"
                )))
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(e.into()),
            None => return Err(Error::Unexpected("bridge closed the socket".into())),
        }
    }
}

/// The list `/api/servers` serves now: its epoch, seq and length.
struct Listed {
    epoch: String,
    seq: u64,
    servers: usize,
}

fn listed(body: &[u8]) -> Result<Listed> {
    let v: serde_json::Value = serde_json::from_slice(body)?;
    let (Some(epoch), Some(seq), Some(servers)) = (
        v["epoch"].as_str(),
        v["seq"].as_u64(),
        v["servers"].as_array(),
    ) else {
        return Err(Error::Unexpected(
            "/api/servers lacks epoch, seq or servers".into(),
        ));
    };
    Ok(Listed {
        epoch: epoch.to_owned(),
        seq,
        servers: servers.len(),
    })
}

async fn api_list(bridge: SocketAddr) -> Result<Listed> {
    listed(&procs::http_request(bridge, "/api/servers", &[]).await?.body)
}

/// Registers servers `from..n` on their own connections to the embedded
/// master and waits (every 1,000) until `/api/servers` lists them.
async fn register(
    master: SocketAddr,
    bridge: SocketAddr,
    from: usize,
    n: usize,
) -> Result<Vec<Conn>> {
    let mut conns = Vec::with_capacity(n - from);
    for i in from..n {
        let mut c = direct::connect(master).await?;
        let port = 20_000 + (i % 30_000) as u16;
        direct::send(&mut c, &direct::register_json(&format!("Delta {i}"), port)).await?;
        conns.push(c);
        if (i + 1) % 1000 == 0 || i + 1 == n {
            within(
                Duration::from_secs(60),
                format!("{} servers listed", i + 1),
                async {
                    loop {
                        // 503 until the bridge has its first list.
                        if let Ok(l) = api_list(bridge).await {
                            if l.servers > i {
                                return Ok(());
                            }
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
            )
            .await?;
        }
    }
    Ok(conns)
}

/// One server changes its players every `interval` for `window`, in turn
/// through the list (never twice the same count in a row); returns how many
/// changes were sent.
async fn churn(
    servers: &mut [Conn],
    interval: Duration,
    window: Duration,
    k: &mut u64,
) -> Result<u64> {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let start = Instant::now();
    let mut sent = 0;
    loop {
        tick.tick().await;
        if start.elapsed() >= window {
            return Ok(sent);
        }
        let i = (*k as usize).wrapping_mul(7_919) % servers.len();
        let current = 1 + *k % 997;
        direct::send(&mut servers[i], &direct::stats_json(current)).await?;
        *k += 1;
        sent += 1;
    }
}

/// Bridge CPU over one churn window: (CPU time, wall time, changes sent).
async fn churn_cpu(
    pid: u32,
    servers: &mut [Conn],
    env: &Env,
    k: &mut u64,
) -> Result<(Duration, Duration, u64)> {
    let s = &env.sizes;
    let cpu = procs::cpu_time(pid)?;
    let t = Instant::now();
    let sent = churn(servers, s.churn_interval, s.churn_window, k).await?;
    let wall = t.elapsed();
    Ok((procs::cpu_time(pid)? - cpu, wall, sent))
}

fn share(cpu: Duration, wall: Duration) -> f64 {
    100.0 * cpu.as_secs_f64() / wall.as_secs_f64().max(1e-9)
}

/// Latency rounds: `servers[0]` changes its stats over TCP.
async fn rounds(
    viewers: &mut Viewers,
    servers: &mut [Conn],
    first_id: u64,
    n: usize,
) -> Result<(Histogram<u64>, Duration)> {
    let mut h = histogram();
    let mut worst = Duration::ZERO;
    for i in 0..n as u64 {
        let current = MARKER_BASE + first_id + i;
        let game = &mut servers[0];
        let got = viewers
            .round(
                first_id + i,
                current,
                direct::send(game, &direct::stats_json(current)),
            )
            .await?;
        for d in got {
            record(&mut h, d);
            worst = worst.max(d);
        }
        // Let the change settle, as changes spaced in time would.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok((h, worst))
}

fn kb(bytes: f64) -> String {
    if bytes >= 10_000.0 {
        format!("{:.0} KB", bytes / 1000.0)
    } else {
        format!("{:.2} KB", bytes / 1000.0)
    }
}

fn subscribe_json(l: &Listed) -> String {
    format!(
        r#"{{"command":"bridgeSubscribe","content":{{"deltas":true,"epoch":"{}","since":{}}}}}"#,
        l.epoch, l.seq
    )
}

/// The same change with a remote master (`--master`): the bridge learns it
/// at its next poll, so it waits up to one poll interval.
async fn remote_master(env: &Env) -> Result<(Histogram<u64>, Duration)> {
    let s = &env.sizes;
    let opts = BridgeOptions::default();
    let (master, maddr) = procs::start_master(&env.bins, s.fanout_servers + 100).await?;
    let mut servers = direct::register_servers(maddr, s.fanout_servers, "Polled", 0).await?;
    let (bridge, baddr) = procs::start_bridge(&env.bins, maddr, &opts).await?;
    let list = within(Duration::from_secs(20), "the bridge's first list", async {
        loop {
            if let Ok(l) = api_list(baddr).await {
                return Ok(l);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await?;
    let mut one = Viewers::open(baddr, 1, Mode::Deltas, &subscribe_json(&list)).await?;
    let measured = rounds(&mut one, &mut servers, 500, s.deltas_rounds).await;
    one.close();
    bridge.stop().await;
    master.stop().await;
    Ok((measured?.0, opts.poll_interval))
}

/// Runs the deltas figures.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let s = &env.sizes;
    let load_before = procs::load_average().unwrap_or_else(|| "?".into());
    let (bridge, baddr, maddr) =
        procs::start_bridge_embedded(&env.bins, &BridgeOptions::default()).await?;
    let pid = bridge.pid();
    let n = s.deltas_servers;
    // Baselines of the latency: one delta viewer, first with a short list
    // (what the bridge's work per change costs at 10,000 shows beside it).
    let few = s.fanout_servers.min(n);
    let mut servers = register(maddr, baddr, 0, few).await?;
    let mut one = Viewers::open(
        baddr,
        1,
        Mode::Deltas,
        &subscribe_json(&api_list(baddr).await?),
    )
    .await?;
    let (short, _) = rounds(&mut one, &mut servers, 1, s.deltas_rounds).await?;
    one.close();
    servers.extend(register(maddr, baddr, few, n).await?);

    // First load: the same list raw, gzip and br.
    let raw = procs::http_request(baddr, "/api/servers", &[]).await?;
    let mut packed = Vec::new();
    for enc in ["br", "gzip"] {
        let a = procs::http_request(baddr, "/api/servers", &[("Accept-Encoding", enc)]).await?;
        if a.header("content-encoding") != Some(enc) {
            return Err(Error::Unexpected(format!(
                "/api/servers ignored Accept-Encoding: {enc}"
            )));
        }
        packed.push((enc, a.body.len()));
    }
    let list = listed(&raw.body)?;
    if list.servers != n {
        return Err(Error::Unexpected(format!(
            "/api/servers lists {} servers, not {n}",
            list.servers
        )));
    }

    let mut one = Viewers::open(baddr, 1, Mode::Deltas, &subscribe_json(&list)).await?;
    let (base, _) = rounds(&mut one, &mut servers, 50, s.deltas_rounds).await?;
    one.close();

    // Baseline of the CPU: the same churn with no viewer.
    let mut k = 0;
    let (idle_cpu, idle_wall, idle_changes) = churn_cpu(pid, &mut servers, env, &mut k).await?;

    let list = api_list(baddr).await?;
    let v = s.deltas_viewers;
    let mut viewers = Viewers::open(baddr, v, Mode::Deltas, &subscribe_json(&list)).await?;
    let whole = Viewers::open(baddr, 1, Mode::Whole, r#"{"command":"bridgeSubscribe"}"#).await?;
    let load_during = procs::load_average().unwrap_or_else(|| "?".into());
    let before = (
        viewers.counts.bytes.load(Relaxed),
        viewers.counts.messages.load(Relaxed),
        whole.counts.bytes.load(Relaxed),
    );
    let (mixed_cpu, wall, changes) = churn_cpu(pid, &mut servers, env, &mut k).await?;
    // Let the last change arrive before counting.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let secs = wall.as_secs_f64();
    let delta_rate = (viewers.counts.bytes.load(Relaxed) - before.0) as f64 / v as f64 / secs;
    let delta_msgs = (viewers.counts.messages.load(Relaxed) - before.1) as f64 / v as f64;
    let whole_rate = (whole.counts.bytes.load(Relaxed) - before.2) as f64 / secs;
    let fell_back = viewers.counts.snapshots.load(Relaxed);
    viewers.check()?;
    whole.close();
    // The bridge's CPU for the delta viewers alone: the whole-list viewer
    // costs it a 1.4 MB write per change.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (cpu, cpu_wall, _) = churn_cpu(pid, &mut servers, env, &mut k).await?;
    viewers.check()?;

    let (many, worst) = rounds(&mut viewers, &mut servers, 100, s.deltas_rounds).await?;
    viewers.close();
    drop(servers);
    bridge.stop().await;
    let (polled, poll) = remote_master(env).await?;

    let servers_n = count(n as u64);
    let viewers_n = count(v as u64);
    let p99 = many.value_at_quantile(0.99);
    let raw_len = raw.body.len() as f64;
    let mut rows = vec![Row::new(
        format!(
            "deltas: bytes per viewer per second, one of {servers_n} servers changes every {} ({viewers_n} delta viewers, {:.1} s, embedded master)",
            ms(s.churn_interval.as_micros() as u64),
            secs
        ),
        format!(
            "{}/s ({delta_msgs:.1} deltas per viewer for {changes} changes{})",
            kb(delta_rate),
            if fell_back > 0 {
                format!("; {fell_back} snapshots resent")
            } else {
                String::new()
            }
        ),
        format!("whole-list subscriber: {}/s", kb(whole_rate)),
        if delta_rate > 0.0 {
            format!("1/{:.0}", whole_rate / delta_rate)
        } else {
            "-".into()
        },
        "≤ 2 KB/s",
        Verdict::of(delta_rate <= 2_000.0),
    )];
    rows.push(Row::new(
        format!(
            "deltas: game server's TCP stats update → {viewers_n} delta viewers, embedded master, {servers_n} servers ({} rounds)",
            s.deltas_rounds
        ),
        format!(
            "p50 {} / p99 {}; all {viewers_n} had it within {}",
            q(&many, 0.5),
            q(&many, 0.99),
            ms(worst.as_micros() as u64)
        ),
        format!(
            "1 delta viewer: p99 {} (p50 {}); 1 viewer with {} servers listed: p99 {} (p50 {})",
            q(&base, 0.99),
            q(&base, 0.5),
            count(few as u64),
            q(&short, 0.99),
            q(&short, 0.5)
        ),
        times(p99 as f64, base.value_at_quantile(0.99) as f64),
        "p99 ≤ 150 ms",
        Verdict::of(p99 <= 150_000),
    ));
    rows.push(Row::new(
        format!(
            "deltas with --master (remote master, polled): game server's TCP stats update → 1 delta viewer, {} servers ({} rounds)",
            count(s.fanout_servers as u64),
            s.deltas_rounds
        ),
        format!("p50 {} / p99 {}", q(&polled, 0.5), q(&polled, 0.99)),
        format!("poll interval {}: poll-bound by design", ms(poll.as_micros() as u64)),
        times(polled.value_at_quantile(0.99) as f64, poll.as_micros() as f64),
        "-",
        Verdict::Info,
    ));
    for (enc, len) in packed {
        rows.push(Row::new(
            format!("first load: GET /api/servers, {servers_n} servers, Accept-Encoding: {enc}"),
            format!(
                "{} ({:.1} % of raw)",
                kb(len as f64),
                100.0 * len as f64 / raw_len
            ),
            format!("raw JSON {}", kb(raw_len)),
            times(len as f64, raw_len),
            "≤ 25 % of raw",
            Verdict::of(len as f64 <= 0.25 * raw_len),
        ));
    }
    rows.push(Row::new(
        format!(
            "deltas: bridge CPU (user+sys) while {viewers_n} delta viewers watch the churn ({:.1} s)",
            cpu_wall.as_secs_f64()
        ),
        format!(
            "{:.1} % of one core ({:.2} s)",
            share(cpu, cpu_wall),
            cpu.as_secs_f64()
        ),
        format!(
            "same churn, no viewers: {:.1} % ({:.2} s, {:.1} ms per change); with 1 whole-list viewer besides the delta viewers: {:.1} %",
            share(idle_cpu, idle_wall),
            idle_cpu.as_secs_f64(),
            idle_cpu.as_secs_f64() * 1000.0 / idle_changes.max(1) as f64,
            share(mixed_cpu, wall)
        ),
        times(share(cpu, cpu_wall), share(idle_cpu, idle_wall)),
        "-",
        Verdict::Info,
    ));
    rows.push(Row::new(
        "deltas: machine load (1-min load average, 2 cores shared)",
        format!("{load_during} with the viewers"),
        format!("{load_before} at the phase's start"),
        "-",
        "-",
        Verdict::Info,
    ));
    Ok(rows)
}
