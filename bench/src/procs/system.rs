//! What the operating system says about a process: resident memory and
//! CPU time from `/proc`, the machine's load, and CPU pinning with
//! `taskset`.

use std::{process::Stdio, time::Duration};

use crate::error::{Error, Result};

/// `VmRSS` of any process in KiB.
pub fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| Error::Unexpected(format!("no VmRSS for pid {pid}")))
}

/// Whether `taskset` (util-linux) can be run.
pub fn taskset_available() -> bool {
    std::process::Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The CPU list a process may run on (`taskset -cp PID`).
pub fn affinity(pid: u32) -> Result<String> {
    let out = std::process::Command::new("taskset")
        .args(["-cp", &pid.to_string()])
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.rsplit(": ")
        .next()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty() && out.status.success())
        .ok_or_else(|| Error::Unexpected(format!("taskset -cp {pid}: {text}")))
}

/// Moves every thread of `pid` to `cpus` (`taskset -a -cp CPUS PID`).
pub fn pin(pid: u32, cpus: &str) -> Result<()> {
    let out = std::process::Command::new("taskset")
        .args(["-a", "-cp", cpus, &pid.to_string()])
        .output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(Error::Unexpected(format!(
            "taskset -a -cp {cpus} {pid}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// CPU time (user + system) a process has used so far, from
/// `/proc/PID/stat`.
pub fn cpu_time(pid: u32) -> Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    stat_cpu_time(&stat).ok_or_else(|| Error::Unexpected(format!("unreadable /proc/{pid}/stat")))
}

/// CPU time (user + system) of the thread of `pid` named `name` (its
/// `comm`, as the program named it), from `/proc/PID/task/TID/stat`: what
/// one worker thread of a process costs.
pub fn thread_cpu_time(pid: u32, name: &str) -> Result<Duration> {
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let dir = task?.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let stat = std::fs::read_to_string(dir.join("stat"))?;
            return stat_cpu_time(&stat).ok_or_else(|| {
                Error::Unexpected(format!("unreadable {}", dir.join("stat").display()))
            });
        }
    }
    Err(Error::Unexpected(format!(
        "no thread {name} in process {pid}"
    )))
}

/// utime + stime of a process's or thread's `stat` line.
fn stat_cpu_time(stat: &str) -> Option<Duration> {
    // The command name (field 2) may hold spaces: count from its ")".
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After ")": state is field 3, so utime (14) and stime (15) are 11 and 12.
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
    let (user, sys) = (ticks(11)?, ticks(12)?);
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = u64::try_from(hz).ok().filter(|h| *h > 0).unwrap_or(100);
    Some(Duration::from_micros((user + sys) * 1_000_000 / hz))
}

/// The 1-minute load average (`/proc/loadavg`), to say how busy the shared
/// machine was.
pub fn load_average() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
}
