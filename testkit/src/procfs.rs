//! What Linux says about a process in `/proc`: its resident memory, now
//! and at its peak, and the CPU time it or one of its threads has used.
//! For the tests that bound what an abuse costs the bridge and for the
//! benchmarks' figures.

use std::time::Duration;

use crate::{Error, Result};

/// `VmRSS` (resident memory now) of process `pid`, in KiB.
pub fn rss_kib(pid: u32) -> Result<u64> {
    status_kib(pid, "VmRSS:")
}

/// `VmHWM` (peak resident memory) of process `pid`, in KiB.
pub fn peak_rss_kib(pid: u32) -> Result<u64> {
    status_kib(pid, "VmHWM:")
}

/// A `kB` line of `/proc/PID/status`.
fn status_kib(pid: u32, field: &str) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| Error::Unexpected(format!("no {field} for pid {pid}")))
}

/// CPU time (user + system) process `pid` has used so far, from
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_memory_and_has_used_cpu() {
        let pid = std::process::id();
        let now = rss_kib(pid).expect("VmRSS");
        assert!(now > 0 && peak_rss_kib(pid).expect("VmHWM") >= now);
        cpu_time(pid).expect("its stat");
        assert_eq!(
            stat_cpu_time("1 (a b) S 0 0 0 0 0 0 0 0 0 0 100 50 0"),
            Some(Duration::from_micros(
                150 * 1_000_000 / {
                    // SAFETY: sysconf has no memory effects.
                    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
                    u64::try_from(hz).unwrap_or(100)
                }
            ))
        );
    }
}
