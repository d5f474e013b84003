//! How big each load is: the full sizes the targets are set for, or a smoke
//! run that only checks the benchmark still works (tiny counts, seconds in
//! total).

use std::time::Duration;

/// Counts and durations of every phase.
#[derive(Debug, Clone)]
pub struct Sizes {
    /// Whether this is the smoke run (its figures mean nothing).
    pub smoke: bool,
    /// Servers listed during the relay phases (what each query returns).
    pub relay_servers: usize,
    /// Sequential queries per client for the round-trip figure.
    pub relay_rounds: usize,
    /// Unmeasured queries first (connections, caches, CPU frequency).
    pub warmup_rounds: usize,
    /// Connections of the throughput figure.
    pub throughput_conns: usize,
    /// Requests in flight per connection.
    pub in_flight: usize,
    /// How long each throughput run lasts.
    pub throughput_time: Duration,
    /// Idle viewers for the memory figure.
    pub idle_viewers: usize,
    /// Idle viewers held at the end of the memory phase.
    pub held_viewers: usize,
    /// How long they are held.
    pub hold_time: Duration,
    /// Subscribed viewers of the fan-out figure.
    pub fanout_viewers: usize,
    /// Servers registered during the fan-out (what each push carries).
    pub fanout_servers: usize,
    /// Changes of each kind (admin command, game server) during the window.
    pub fanout_rounds: usize,
    /// The window in which the bridge's master queries are counted.
    pub fanout_window: Duration,
    /// Servers listed during the deltas phase (each on its own connection
    /// to the bridge's embedded master).
    pub deltas_servers: usize,
    /// Delta-subscribed viewers of the deltas phase.
    pub deltas_viewers: usize,
    /// How often one server changes during the churn.
    pub churn_interval: Duration,
    /// How long each churn window lasts (bytes and CPU are counted over it).
    pub churn_window: Duration,
    /// Game-server changes whose delay to every delta viewer is measured.
    pub deltas_rounds: usize,
    /// Servers on the page (each on its own master connection).
    pub page_servers: usize,
    /// Page loads measured.
    pub page_loads: usize,
    /// One-server changes measured on the page.
    pub page_changes: usize,
    /// Sequential master queries for the master-query figure.
    pub master_rounds: usize,
    /// Scale-out: idle viewers per bridge (one bridge direct holds this
    /// many, two behind nginx twice as many).
    pub scaleout_viewers: usize,
    /// Scale-out: subscribed viewers of the fan-out, direct and via nginx.
    pub scaleout_subscribers: usize,
    /// Scale-out: servers listed (what each push carries).
    pub scaleout_servers: usize,
    /// Scale-out: changes of each kind per path.
    pub scaleout_rounds: usize,
    /// Scale-out: how long idle viewers are held, and the window in which
    /// the master's queries are counted.
    pub scaleout_window: Duration,
    /// Soak rounds (the first is the warm-up).
    pub soak_rounds: usize,
    /// Viewers that connect, subscribe and leave in each soak round.
    pub soak_viewers: usize,
    /// Servers listed during the soak (what each subscriber receives).
    pub soak_servers: usize,
    /// Webhooks: servers listed while one of them changes.
    pub webhook_servers: usize,
    /// Webhooks: changes measured (each a lobby opening).
    pub webhook_rounds: usize,
    /// Webhooks: changes a Discord status card is measured for, each made
    /// right after the card's last edit (the whole coalescing window).
    pub card_edit_rounds: usize,
    /// Webhooks and Web Push: bridges on one PostgreSQL database behind one
    /// master, measured beside the one-bridge baseline.
    pub notify_bridges: usize,
    /// Web Push: subscriptions watching the measured servers.
    pub push_subscriptions: usize,
    /// Web Push: the baseline's subscriptions.
    pub push_baseline: usize,
    /// Web Push: lobby openings measured (one server each).
    pub push_rounds: usize,
    /// History: servers of the synthetic history and of the live recording.
    pub history_servers: usize,
    /// History: days of synthetic history (ending now).
    pub history_days: i64,
    /// History: the last hours written at the 60 s interval (before them
    /// one sample per hour; `history_days * 24` writes every sample).
    pub history_dense_hours: i64,
    /// History: the last days written one sample per hour; before them one
    /// sample per day (the daily rows past the hourly tier's 90 days keep
    /// no hours, so a day's one sample leaves the rows its 24 would).
    /// `history_days` writes every hour.
    pub history_hourly_days: i64,
    /// History: hours the raw-sample baseline writes for real (then scaled).
    pub history_raw_hours: i64,
    /// History: distinct keys asked for once each (uncached answers).
    pub history_requests: usize,
    /// History: delta viewers of the push while samples are written.
    pub history_viewers: usize,
    /// History: push rounds during a write, and as many clear of one.
    pub history_rounds: usize,
    /// Handover: bridges sharing one PostgreSQL database (one records).
    pub handover_bridges: usize,
    /// Handover: game servers listed (what each sample holds).
    pub handover_servers: usize,
    /// Handover: the bridges' `--history-interval`.
    pub handover_interval: Duration,
    /// Handover: recorders killed, one after another.
    pub handover_rounds: usize,
    /// Change cost: the small list (the baseline) and the large one.
    pub change_cost_servers: [usize; 2],
    /// Change cost: how often one server changes its stats.
    pub change_cost_interval: Duration,
    /// Change cost: how long the changes last (CPU is read around them).
    pub change_cost_window: Duration,
    /// Change cost: windows per list size; each figure is their median.
    pub change_cost_windows: usize,
    /// Cards: servers listed, each card drawn once.
    pub card_servers: usize,
    /// Cards: requests for them after (from the cache).
    pub card_requests: usize,
    /// Lighthouse: servers listed on the page it measures.
    pub lighthouse_servers: usize,
    /// Lighthouse: runs of each page whose median is reported.
    pub lighthouse_runs: usize,
}

impl Sizes {
    /// The sizes the benchmark's targets are set for.
    pub fn full() -> Self {
        Self {
            smoke: false,
            relay_servers: 100,
            relay_rounds: 5_000,
            warmup_rounds: 500,
            throughput_conns: 64,
            in_flight: 4,
            throughput_time: Duration::from_secs(10),
            idle_viewers: 5_000,
            held_viewers: 10_000,
            hold_time: Duration::from_secs(10),
            fanout_viewers: 5_000,
            fanout_servers: 500,
            fanout_rounds: 5,
            fanout_window: Duration::from_secs(10),
            deltas_servers: 10_000,
            deltas_viewers: 5_000,
            churn_interval: Duration::from_millis(200),
            churn_window: Duration::from_secs(10),
            deltas_rounds: 10,
            page_servers: 10_000,
            page_loads: 3,
            page_changes: 5,
            master_rounds: 500,
            scaleout_viewers: 4_000,
            scaleout_subscribers: 2_000,
            scaleout_servers: 100,
            scaleout_rounds: 3,
            scaleout_window: Duration::from_secs(5),
            soak_rounds: 8,
            soak_viewers: 3_000,
            soak_servers: 50,
            webhook_servers: 500,
            webhook_rounds: 20,
            card_edit_rounds: 6,
            notify_bridges: 3,
            push_subscriptions: 10_000,
            push_baseline: 100,
            push_rounds: 3,
            history_servers: 10_000,
            history_days: 30,
            history_dense_hours: 49,
            history_hourly_days: 30,
            history_raw_hours: 6,
            history_requests: 2_000,
            history_viewers: 1_000,
            history_rounds: 10,
            handover_bridges: 3,
            handover_servers: 20,
            handover_interval: Duration::from_secs(2),
            handover_rounds: 5,
            change_cost_servers: [100, 9_500],
            change_cost_interval: Duration::from_millis(5),
            change_cost_window: Duration::from_secs(10),
            change_cost_windows: 3,
            card_servers: 100,
            card_requests: 1_000,
            lighthouse_servers: 60,
            lighthouse_runs: 3,
        }
    }

    /// A few seconds in total: checks that every phase still runs.
    pub fn smoke() -> Self {
        Self {
            smoke: true,
            relay_servers: 5,
            relay_rounds: 50,
            warmup_rounds: 10,
            throughput_conns: 4,
            in_flight: 2,
            throughput_time: Duration::from_millis(500),
            idle_viewers: 50,
            held_viewers: 100,
            hold_time: Duration::from_millis(500),
            fanout_viewers: 20,
            fanout_servers: 10,
            fanout_rounds: 1,
            fanout_window: Duration::from_secs(2),
            deltas_servers: 50,
            deltas_viewers: 20,
            churn_interval: Duration::from_millis(200),
            churn_window: Duration::from_secs(1),
            deltas_rounds: 1,
            page_servers: 50,
            page_loads: 1,
            page_changes: 1,
            master_rounds: 20,
            scaleout_viewers: 20,
            scaleout_subscribers: 10,
            scaleout_servers: 5,
            scaleout_rounds: 1,
            scaleout_window: Duration::from_secs(2),
            soak_rounds: 3,
            soak_viewers: 20,
            soak_servers: 5,
            webhook_servers: 5,
            webhook_rounds: 2,
            card_edit_rounds: 1,
            notify_bridges: 2,
            push_subscriptions: 20,
            push_baseline: 4,
            push_rounds: 2,
            history_servers: 20,
            history_days: 3,
            history_dense_hours: 50,
            history_hourly_days: 3,
            history_raw_hours: 1,
            history_requests: 20,
            history_viewers: 5,
            history_rounds: 1,
            handover_bridges: 2,
            handover_servers: 3,
            handover_interval: Duration::from_secs(1),
            handover_rounds: 1,
            change_cost_servers: [5, 20],
            change_cost_interval: Duration::from_millis(5),
            change_cost_window: Duration::from_millis(300),
            change_cost_windows: 1,
            card_servers: 5,
            card_requests: 20,
            lighthouse_servers: 5,
            lighthouse_runs: 1,
        }
    }
}
