//! What the operating system says beyond the kit's `procfs`: the
//! machine's load, and CPU pinning with `taskset`.

use std::process::Stdio;

use crate::error::{Error, Result};

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

/// The 1-minute load average (`/proc/loadavg`), to say how busy the shared
/// machine was.
pub fn load_average() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
}
