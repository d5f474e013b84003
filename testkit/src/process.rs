//! Child processes that cannot outlive a test: each runs in its own process
//! group with its output in a log file, and the whole group (a
//! chromedriver's Chromium included) is killed on drop, also when the test
//! panics; then the log's tail is printed for the failure report.

use std::{
    fs::File,
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    thread,
};

/// A running child process (and its process group).
pub struct Proc {
    name: String,
    child: Child,
    log: PathBuf,
    exited: bool,
}

impl Proc {
    /// Starts `cmd` in a new process group, stdout and stderr appended to
    /// `log`; panics if it cannot.
    pub fn spawn(name: &str, cmd: Command, log: &Path) -> Proc {
        Self::try_spawn(name, cmd, log).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Proc::spawn`] that says why it could not start the process (no
    /// log file, no executable) instead of panicking, for the benchmarks.
    pub fn try_spawn(name: &str, mut cmd: Command, log: &Path) -> crate::Result<Proc> {
        let open = |e: std::io::Error| {
            crate::Error::Unexpected(format!("{name}'s log {}: {e}", log.display()))
        };
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .map_err(open)?;
        let err = out.try_clone().map_err(open)?;
        cmd.stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let child = cmd
            .spawn()
            .map_err(|e| crate::Error::Unexpected(format!("cannot start {name} ({cmd:?}): {e}")))?;
        Ok(Proc {
            name: name.to_owned(),
            child,
            log: log.to_path_buf(),
            exited: false,
        })
    }

    /// Starts `cmd` like [`Proc::spawn`] but reads its stdout until a line
    /// starting with `ready` (then keeps draining stdout into nothing) and
    /// returns the rest of that line. Panics with the log if the process
    /// exits first, or has not printed it within [`crate::HUNG`].
    pub fn spawn_ready(name: &str, cmd: Command, log: &Path, ready: &str) -> (Proc, String) {
        let (proc, mut rests) = Self::spawn_ready_all(name, cmd, log, &[ready]);
        (proc, rests.remove(0))
    }

    /// Like [`Proc::spawn_ready`] for a process that prints several lines
    /// before it is ready (a master with its feed, each on port 0): waits
    /// for a line starting with each of `ready`, in any order, and returns
    /// the rest of each line in the order of `ready`.
    pub fn spawn_ready_all(
        name: &str,
        cmd: Command,
        log: &Path,
        ready: &[&str],
    ) -> (Proc, Vec<String>) {
        Self::try_spawn_ready_all(name, cmd, log, ready).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Proc::spawn_ready_all`] that returns why the process is not ready
    /// (it could not start, exited first, or hung; with its log's tail)
    /// instead of panicking, for the benchmarks. Blocks until then.
    pub fn try_spawn_ready_all(
        name: &str,
        mut cmd: Command,
        log: &Path,
        ready: &[&str],
    ) -> crate::Result<(Proc, Vec<String>)> {
        let err = File::options()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| {
                crate::Error::Unexpected(format!("{name}'s log {}: {e}", log.display()))
            })?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(err)
            .process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| crate::Error::Unexpected(format!("cannot start {name} ({cmd:?}): {e}")))?;
        let stdout = child.stdout.take();
        let mut proc = Proc {
            name: name.to_owned(),
            child,
            log: log.to_path_buf(),
            exited: false,
        };
        let Some(stdout) = stdout else {
            return Err(crate::Error::Unexpected(format!("{name}: no stdout")));
        };
        let (tx, rx) = mpsc::channel();
        let prefixes: Vec<String> = ready.iter().map(|p| (*p).to_owned()).collect();
        thread::spawn(move || {
            let mut sent = vec![false; prefixes.len()];
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // The longest prefix that matches: "master feed listening on "
                // is not taken for "master listening on ".
                let found = prefixes
                    .iter()
                    .enumerate()
                    .filter(|(i, p)| !sent[*i] && line.starts_with(p.as_str()))
                    .max_by_key(|(_, p)| p.len());
                if let Some((i, p)) = found {
                    sent[i] = true;
                    let _ = tx.send((i, line[p.len()..].trim().to_owned()));
                }
            }
        });
        let deadline = std::time::Instant::now() + crate::HUNG;
        let mut rests: Vec<Option<String>> = vec![None; ready.len()];
        while rests.iter().any(Option::is_none) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok((i, rest)) => rests[i] = Some(rest),
                Err(e) => {
                    let status = proc.child.try_wait().ok().flatten();
                    proc.kill();
                    let missing: Vec<&str> = ready
                        .iter()
                        .zip(&rests)
                        .filter(|(_, r)| r.is_none())
                        .map(|(p, _)| *p)
                        .collect();
                    return Err(crate::Error::Unexpected(format!(
                        "{name} did not print {missing:?} ({e}; exit status {status:?}); its log:\n{}",
                        log_tail(&proc.log)
                    )));
                }
            }
        }
        Ok((proc, rests.into_iter().flatten().collect()))
    }

    /// The process id (also the process group id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the whole process group at once (SIGKILL: a crash, no
    /// goodbyes) and reaps the child.
    pub fn kill(&mut self) {
        if self.exited {
            return;
        }
        if let Ok(pgid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group
            // this struct created for its own child; it touches no memory.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.exited = true;
    }

    /// Sends `signal` to the process itself (SIGSTOP, SIGCONT, SIGTERM, …).
    pub fn signal(&self, signal: i32) {
        if self.exited {
            return;
        }
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on this struct's own child; it touches no memory.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }

    /// Its exit status if it has exited by now (not waited for; the rest
    /// of its process group is still killed on drop).
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits for the process to exit by itself; its exit status, or
    /// `None` when it still runs after [`crate::HUNG`].
    pub fn wait_exit(&mut self) -> Option<std::process::ExitStatus> {
        let start = std::time::Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exited = true;
                return Some(status);
            }
            if start.elapsed() >= crate::HUNG {
                return None;
            }
            thread::sleep(crate::POLL);
        }
    }

    /// The last lines of the process's log.
    pub fn log_tail(&self) -> String {
        log_tail(&self.log)
    }
}

impl std::fmt::Debug for Proc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proc")
            .field("name", &self.name)
            .field("pid", &self.child.id())
            .field("log", &self.log)
            .finish_non_exhaustive()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
        if thread::panicking() {
            eprintln!(
                "---- last lines of {} ({}) ----\n{}",
                self.name,
                self.log.display(),
                log_tail(&self.log)
            );
        }
    }
}

/// The log's last 40 lines; of a longer log also its first 15, where a
/// process that failed to start says why before a backtrace fills the rest.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= 55 {
        return lines.join("\n");
    }
    format!(
        "{}\n[… {} lines …]\n{}",
        lines[..15].join("\n"),
        lines.len() - 55,
        lines[lines.len() - 40..].join("\n")
    )
}

/// Runs `cmd` (a tool: openssl, `nginx -t`, `pg_ctl`) to its end with
/// no input; what it printed on stdout, or, unless it succeeded, an error
/// naming `what` with everything it printed.
pub fn output(what: &str, cmd: &mut Command) -> crate::Result<String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| crate::Error::Unexpected(format!("cannot run {what}: {e}")))?;
    if !out.status.success() {
        return Err(crate::Error::Unexpected(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A port that was free a moment ago (for programs that cannot take port 0
/// and report it, like chromedriver or PostgreSQL, or to restart on a
/// known port).
pub fn free_port() -> u16 {
    try_free_port().expect("a free port on 127.0.0.1")
}

/// Where [`free_port`] picks from: the ports below the kernel's ephemeral
/// range. Every `127.0.0.1:0` bind and every outgoing connection of the
/// tests takes its port from that range, so a port picked there and let
/// go could be taken (under load, it was: a PostgreSQL cluster found its
/// port in use) before the program that cannot pick its own binds it.
/// Below it, only another pick can collide, and picks are random over
/// thousands of ports. `None` where the range starts too low to leave
/// room (then the kernel's choice, as before).
fn picked_ports() -> Option<std::ops::Range<u16>> {
    const FIRST: u16 = 20_000;
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let low: u16 = range.split_whitespace().next()?.parse().ok()?;
    (low >= FIRST + 1_000).then_some(FIRST..low)
}

/// [`free_port`] that says why it found none instead of panicking, for
/// the kit's launchers that report failures as values.
pub fn try_free_port() -> std::io::Result<u16> {
    let Some(ports) = picked_ports() else {
        return Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port());
    };
    let span = ports.end - ports.start;
    for _ in 0..64 {
        let mut random = [0u8; 2];
        getrandom::fill(&mut random).map_err(std::io::Error::other)?;
        let port = ports.start + u16::from_le_bytes(random) % span;
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(listener) => return Ok(listener.local_addr()?.port()),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AddrInUse,
        format!("64 random ports in {ports:?} were all in use"),
    ))
}

/// A plain HTTP/1.1 GET from a thread off the runtime (or a probe that
/// does not await), or the error as text; [`crate::http::get`] is the
/// same request for async code.
pub fn http_get(addr: SocketAddr, path: &str) -> Result<HttpResponse, String> {
    http_get_with(addr, path, "")
}

/// [`http_get`] with more header lines (`extra`, each ending in `\r\n`).
pub fn http_get_with(addr: SocketAddr, path: &str, extra: &str) -> Result<HttpResponse, String> {
    let mut stream = TcpStream::connect_timeout(&addr, crate::HUNG).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(crate::HUNG))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept-Encoding: identity\r\nConnection: close\r\n{extra}\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if let Some(len) = crate::http::complete_length(&raw) {
            raw.truncate(len);
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) => return Err(format!("{e} after {} bytes", raw.len())),
        }
    }
    let a = crate::http::parse(&raw).ok_or("no HTTP answer")?;
    Ok(HttpResponse {
        status: a.status,
        body: a.text(),
        head: a.head,
    })
}

/// A response from [`http_get`].
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    /// The status line and headers as received.
    pub head: String,
    pub body: String,
}

impl HttpResponse {
    /// Whether the status line or a header contains `needle` (lower case),
    /// whatever the case the server wrote it in.
    pub fn head_contains(&self, needle: &str) -> bool {
        self.head.to_ascii_lowercase().contains(needle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_picked_port_is_free_and_outside_the_kernels_own_range() {
        let port = try_free_port().unwrap();
        if let Some(ports) = picked_ports() {
            assert!(ports.contains(&port), "{port} not in {ports:?}");
        }
        // Free: it binds again.
        TcpListener::bind(("127.0.0.1", port)).unwrap();
    }
}
