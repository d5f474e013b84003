//! `loadgen`: starts the real master and bridge on loopback, measures them
//! against the direct-TCP floor (and the page in headless Chromium), and
//! prints one table with every figure beside a baseline from the same run.

use std::{future::Future, path::PathBuf, pin::Pin, time::Instant};

use anyhow::{bail, Context};
use bench::{
    phases::{self, Env},
    procs::{self, Binaries},
    report::{shown_path, Row, Table},
    Sizes,
};
use clap::{Parser, ValueEnum};

/// A phase of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Phase {
    Relay,
    Memory,
    Fanout,
    Deltas,
    Page,
    Bundle,
    /// Two bridges behind nginx against one direct (needs nginx).
    Scaleout,
    Soak,
    /// 100,000 delta viewers on bridges following the master's feed: only
    /// with `--only scale100k`, never in a default or smoke run.
    #[value(name = "scale100k")]
    Scale100k,
    /// The history: storage of a month, recording, history API, badges.
    History,
    /// Bridges on one PostgreSQL database: the recorder killed, the
    /// recording handed over (needs PostgreSQL).
    Handover,
    /// Webhooks: a change to a receiver's first request.
    Webhooks,
    /// CPU per list change of the processes that pass it on.
    #[value(name = "change-cost")]
    ChangeCost,
    /// Web Push: 10,000 subscriptions, one lobby opening at a time.
    Push,
    /// The PNG cards: drawn once each, then served from the cache.
    Cards,
    /// Lighthouse's mobile run of the page a shared link opens (needs npm
    /// `lighthouse`; not in the smoke run).
    Lighthouse,
}

/// Load generator for the lobby's master and bridge (see bench/README.md).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Tiny counts and sub-second runs: checks that every phase still works
    /// (what CI runs); its figures mean nothing.
    #[arg(long, env = "LOADGEN_SMOKE")]
    smoke: bool,
    /// Phases to run (comma-separated); all by default.
    #[arg(long, value_delimiter = ',', value_enum)]
    only: Vec<Phase>,
    /// Directory holding the `master` and `bridge` executables (default:
    /// the directory of this executable, i.e. the same cargo profile).
    #[arg(long, env = "LOADGEN_BIN_DIR")]
    bin_dir: Option<PathBuf>,
    /// The built front end (Trunk's output).
    #[arg(long, env = "LOADGEN_DIST", default_value = "dist")]
    dist: PathBuf,
    /// The CPU that client, bridge and master share for the round-trip
    /// figure.
    #[arg(long, default_value = "0")]
    pin_cpu: String,
    /// Do not pin (the round-trip figure then mostly measures wake-ups).
    #[arg(long)]
    no_pin: bool,
    /// Sequential queries of the round-trip figure (default 5,000; more
    /// to profile it).
    #[arg(long)]
    relay_rounds: Option<usize>,
    /// Days of the history phase's synthetic history (default 30; fewer
    /// for a shorter run, which the report's labels then say).
    #[arg(long)]
    history_days: Option<i64>,
    /// Hours at the end of that history written at the 60 s interval
    /// (default 49: 48 h of samples, then the steady state).
    #[arg(long)]
    history_dense_hours: Option<i64>,
    /// Days at the end of that history written one sample per hour; before
    /// them one sample per day (default: every day hourly). A year is
    /// `--history-days 365 --history-hourly-days 91`: past the hourly
    /// tier's 90 days a day's row keeps no hours.
    #[arg(long)]
    history_hourly_days: Option<i64>,
    /// Internal: run as one of the scale100k phase's viewer processes,
    /// steered over stdin and stdout.
    #[arg(long, hide = true)]
    scale_worker: bool,
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0 / 1024.0);
    format!("{cpus} CPUs ({model}), {mem_gib:.0} GiB")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.scale_worker {
        return Ok(phases::scale100k::worker().await?);
    }
    let mut sizes = if args.smoke {
        Sizes::smoke()
    } else {
        Sizes::full()
    };
    if let Some(n) = args.relay_rounds {
        sizes.relay_rounds = n;
    }
    if let Some(days) = args.history_days {
        sizes.history_days = days.max(1);
    }
    if let Some(hours) = args.history_dense_hours {
        sizes.history_dense_hours = hours.max(1);
    }
    sizes.history_hourly_days = args
        .history_hourly_days
        .map_or(sizes.history_days, |days| days.max(1));
    let bin_dir = match args.bin_dir {
        Some(d) => d,
        None => std::env::current_exe()?
            .parent()
            .context("executable has no directory")?
            .to_path_buf(),
    };
    let work = std::env::temp_dir().join(format!("lobby-bench-{}", std::process::id()));
    let bins = Binaries {
        master: bin_dir.join("master"),
        bridge: bin_dir.join("bridge"),
        static_dir: args.dist,
        admin_token: work.join("admin-token"),
        work,
    };
    for bin in [&bins.master, &bins.bridge] {
        if !bin.is_file() {
            bail!(
                "{} not found: build it first (`cargo build --release -p master -p bridge`)",
                bin.display()
            );
        }
    }
    std::fs::create_dir_all(&bins.work)?;
    lobby_testkit::launch::write_admin_token(&bins.work)?;

    // Children inherit the raised soft limit; each process stays below the
    // hard one (viewers here, the bridge's sockets in the bridge).
    let nofile = rlimit::increase_nofile_limit(u64::MAX).context("raising the fd limit")?;
    let needed = sizes
        .held_viewers
        .max(sizes.page_servers)
        .max(sizes.deltas_servers + sizes.deltas_viewers) as u64
        + 512;
    let mut notes = Vec::new();
    if nofile < needed {
        bail!("file-descriptor limit {nofile} is below the {needed} this run needs");
    }

    let taskset = procs::taskset_available();
    let pin_cpu = (!args.no_pin && taskset).then(|| args.pin_cpu.clone());
    if !taskset {
        notes.push("taskset (util-linux) is missing: the round trip ran unpinned".to_owned());
    }
    let env = Env {
        bins: bins.clone(),
        sizes: sizes.clone(),
        pin_cpu,
    };
    let wanted =
        |p: Phase| args.only.contains(&p) || (args.only.is_empty() && p != Phase::Scale100k);
    let started = Instant::now();
    let mut table = Table::default();
    // The master, bridges and nginx run in process groups of their own (the
    // test kit's processes), so the terminal's Ctrl-C does not reach them:
    // on Ctrl-C the phase is dropped, and with it they are killed.
    let mut interrupted = std::pin::pin!(tokio::signal::ctrl_c());
    for phase in [
        Phase::Relay,
        Phase::Memory,
        Phase::Fanout,
        Phase::Deltas,
        Phase::Page,
        Phase::Bundle,
        Phase::Scaleout,
        Phase::Soak,
        Phase::Scale100k,
        Phase::History,
        Phase::Handover,
        Phase::Webhooks,
        Phase::ChangeCost,
        Phase::Push,
        Phase::Cards,
        Phase::Lighthouse,
    ] {
        if !wanted(phase) {
            continue;
        }
        eprintln!("[loadgen] phase {phase:?}");
        let t = Instant::now();
        // Boxed: each phase is a large future, and the largest would
        // otherwise sit on the main thread's stack (debug builds overflowed it).
        let run: Pin<Box<dyn Future<Output = bench::Result<Vec<Row>>> + '_>> = match phase {
            Phase::Relay => Box::pin(phases::relay::run(&env)),
            Phase::Memory => Box::pin(phases::memory::run(&env)),
            Phase::Fanout => Box::pin(phases::fanout::run(&env)),
            Phase::Deltas => Box::pin(phases::deltas::run(&env)),
            Phase::Page => Box::pin(phases::page::run(&env)),
            Phase::Bundle => Box::pin(phases::bundle::run(&env)),
            Phase::Scaleout => Box::pin(phases::scaleout::run(&env)),
            Phase::Soak => Box::pin(phases::soak::run(&env)),
            Phase::Scale100k => Box::pin(phases::scale100k::run(&env)),
            Phase::History => Box::pin(phases::history::run(&env)),
            Phase::Handover => Box::pin(phases::handover::run(&env)),
            Phase::Webhooks => Box::pin(phases::webhooks::run(&env)),
            Phase::ChangeCost => Box::pin(phases::change_cost::run(&env)),
            Phase::Push => Box::pin(phases::push::run(&env)),
            Phase::Cards => Box::pin(phases::cards::run(&env)),
            Phase::Lighthouse => Box::pin(phases::lighthouse::run(&env)),
        };
        let rows = tokio::select! {
            rows = run => rows,
            _ = &mut interrupted => bail!(
                "interrupted (Ctrl-C) in phase {phase:?}: its processes were killed; logs in {}",
                bins.work.display()
            ),
        }
        .with_context(|| {
            format!(
                "phase {phase:?} failed (logs of master and bridge in {})",
                bins.work.display()
            )
        })?;
        eprintln!("[loadgen] phase {phase:?} done in {:.1?}", t.elapsed());
        table.rows.extend(rows);
    }
    if table.rows.is_empty() {
        table.rows.push(Row::skipped("-", "no phase selected"));
    }
    let repo = std::env::current_dir()?;
    // Resolved like the executable's own path, so the prefixes compare.
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .and_then(|t| std::fs::canonicalize(PathBuf::from(t)).ok());
    notes.push(format!(
        "machine: {}; master and bridge from {}; fd limit {nofile}; whole run {:.0?}",
        machine(),
        shown_path(&bin_dir, &repo, target_dir.as_deref()),
        started.elapsed()
    ));
    notes.push(
        "master runs with --keepalive-secs 600 and the bridge with --master: idle loopback \
         connections opened in a burst are probed in a burst, which overflows the kernel's \
         loopback backlog (netdev_max_backlog) and drops healthy peers"
            .to_owned(),
    );
    notes.push(
        "relay figures: bridge rate limit lifted (--rate-limit/--rate-burst 1e9); every other \
         phase uses the bridge's defaults (poll interval 1 s, 10,000 connections)"
            .to_owned(),
    );
    if sizes.smoke {
        notes.push("SMOKE RUN: tiny counts, the figures mean nothing".to_owned());
    }
    table.notes = notes;
    println!(
        "\nlobby benchmark{}\n",
        if sizes.smoke { " (smoke)" } else { "" }
    );
    print!("{}", table.render());
    let _ = std::fs::remove_dir_all(&bins.work);
    Ok(())
}
