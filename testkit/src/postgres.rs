//! A scratch PostgreSQL cluster for a test or a benchmark: Debian's
//! `postgresql` package (`bash scripts/setup.sh test` installs it),
//! `initdb` and `pg_ctl` run as the `postgres` user in a temporary
//! directory owned by it, listening on a free loopback port and a unix
//! socket in that directory, stopped and removed when dropped. Nothing
//! of the machine's own clusters is touched.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::{Error, Result};

/// The operating-system user the cluster runs as (PostgreSQL refuses to
/// run as root).
const USER: &str = "postgres";

/// A running scratch cluster (trust authentication, loopback only).
#[derive(Debug)]
pub struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

/// The directory of `initdb` and `pg_ctl`: `$PG_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin` that has them.
pub fn find_bin() -> Result<PathBuf> {
    if let Some(bin) = std::env::var_os("PG_BIN") {
        return Ok(bin.into());
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| missing(&e.to_string()))?
        .filter_map(|d| d.ok())
        .filter_map(|d| {
            let version = d.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = d.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| missing("no initdb"))
}

fn missing(why: &str) -> Error {
    Error::Unexpected(format!(
        "PostgreSQL is missing ({why}; bash scripts/setup.sh test installs Debian's postgresql)"
    ))
}

impl Cluster {
    /// Creates and starts a cluster (a few seconds).
    pub fn start() -> Result<Self> {
        let bin = find_bin()?;
        let dir = tempfile::Builder::new().prefix("lobby-pg-").tempdir()?;
        chown_to_user(dir.path())?;
        // PostgreSQL cannot be told to pick a port.
        let port = crate::process::try_free_port()?;
        let cluster = Self { bin, dir, port };
        cluster.run(
            "initdb",
            &[
                "-D",
                &cluster.data().display().to_string(),
                "-A",
                "trust",
                "-U",
                USER,
                "--no-sync",
                "-E",
                "UTF8",
            ],
        )?;
        cluster.resume()?;
        Ok(cluster)
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `db` over TCP, as a bridge's `--database-url`.
    pub fn url(&self, db: &str) -> String {
        format!("postgresql://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// Creates database `db` and gives its URL (each test its own).
    pub fn create_database(&self, db: &str) -> Result<String> {
        let socket = self.dir.path().display().to_string();
        self.run(
            "createdb",
            &["-h", &socket, "-p", &self.port.to_string(), "-U", USER, db],
        )?;
        Ok(self.url(db))
    }

    /// What `sql` gives in database `db`, as `psql` prints it unaligned
    /// and without headers (one row per line, columns joined by `|`): for
    /// a test that checks what the bridges wrote.
    pub fn query(&self, db: &str, sql: &str) -> Result<String> {
        let socket = self.dir.path().display().to_string();
        let port = self.port.to_string();
        self.output(
            "psql",
            &[
                "-h",
                &socket,
                "-p",
                &port,
                "-U",
                USER,
                "-d",
                db,
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ],
        )
    }

    /// Adds login role `role` with `password`, which must give it over TCP
    /// (scram-sha-256; every other role stays trusted), and makes it the
    /// owner of database `db`: for a test of a refused password.
    pub fn add_password_role(&self, role: &str, password: &str, db: &str) -> Result<()> {
        let hba = self.data().join("pg_hba.conf");
        let rest = std::fs::read_to_string(&hba)?;
        std::fs::write(
            &hba,
            format!("host all {role} 127.0.0.1/32 scram-sha-256\n{rest}"),
        )?;
        self.query(
            "postgres",
            &format!("CREATE ROLE {role} LOGIN PASSWORD '{password}'"),
        )?;
        self.query("postgres", &format!("ALTER DATABASE {db} OWNER TO {role}"))?;
        self.query("postgres", "SELECT pg_reload_conf()")?;
        Ok(())
    }

    /// The times (Unix ms) of the lobby's samples the bridges recorded in
    /// database `db` (`lobby_samples`), oldest first: one per interval
    /// recorded, whichever bridge recorded it.
    pub fn sample_times(&self, db: &str) -> Result<Vec<i64>> {
        self.query(db, "SELECT t FROM lobby_samples ORDER BY t")?
            .lines()
            .map(|l| {
                l.trim()
                    .parse()
                    .map_err(|_| Error::Unexpected(format!("not a sample time: {l:?}")))
            })
            .collect()
    }

    /// Stops the server at once (as a crash or a lost host would), keeping
    /// its data: a database outage, ended by [`Cluster::resume`].
    pub fn stop(&self) -> Result<()> {
        let data = self.data().display().to_string();
        self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"])
    }

    /// Starts the server (again) and waits until it accepts connections.
    pub fn resume(&self) -> Result<()> {
        let data = self.data().display().to_string();
        let log = self.dir.path().join("log").display().to_string();
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off",
            self.port,
            self.dir.path().display()
        );
        self.run(
            "pg_ctl",
            &[
                "-D", &data, "-l", &log, "-o", &options, "-w", "-t", "60", "start",
            ],
        )
        .map_err(|e| {
            // pg_ctl says only "could not start server": the reason is in
            // the server's log, which goes with the scratch directory.
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            let lines: Vec<&str> = said.lines().collect();
            let tail = lines[lines.len().saturating_sub(8)..].join("\n");
            crate::Error::Unexpected(format!("{e}; the server's log ends:\n{tail}"))
        })
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs one of the cluster's programs as [`USER`].
    fn run(&self, program: &str, args: &[&str]) -> Result<()> {
        self.output(program, args).map(drop)
    }

    /// Runs one of the cluster's programs as [`USER`]; what it printed.
    fn output(&self, program: &str, args: &[&str]) -> Result<String> {
        let exe = self.bin.join(program);
        let mut command = if running_as(USER) {
            Command::new(&exe)
        } else {
            let mut c = Command::new("runuser");
            c.args(["-u", USER, "--"]).arg(&exe);
            c
        };
        command.args(args).current_dir(self.dir.path());
        crate::process::output(&exe.display().to_string(), &mut command)
    }
}

/// Where the recording lost (or doubled) an interval: each pair of
/// consecutive sample times (from [`Cluster::sample_times`]) that are not
/// exactly `every_ms` apart. Empty: every interval from the first sample to
/// the last has exactly one sample.
pub fn interval_gaps(times: &[i64], every_ms: i64) -> Vec<(i64, i64)> {
    times
        .windows(2)
        .filter(|w| w[1] - w[0] != every_ms)
        .map(|w| (w[0], w[1]))
        .collect()
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn running_as(user: &str) -> bool {
    std::env::var("USER").is_ok_and(|u| u == user)
}

/// Gives `dir` to [`USER`] (when running as root, as the test machines
/// do), so the cluster can write there.
fn chown_to_user(dir: &Path) -> Result<()> {
    if running_as(USER) {
        return Ok(());
    }
    let out = Command::new("id")
        .args(["-u", USER])
        .output()
        .map_err(|e| Error::Unexpected(format!("id: {e}")))?;
    let uid: u32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| missing("no postgres user"))?;
    let out = Command::new("id").args(["-g", USER]).output()?;
    let gid: u32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| missing("no postgres group"))?;
    std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::interval_gaps;

    #[test]
    fn a_missing_or_doubled_interval_is_a_gap() {
        assert!(interval_gaps(&[], 2000).is_empty());
        assert!(interval_gaps(&[1000, 3000, 5000], 2000).is_empty());
        assert_eq!(interval_gaps(&[1000, 5000, 7000], 2000), [(1000, 5000)]);
        assert_eq!(interval_gaps(&[1000, 2000, 3000], 2000).len(), 2);
    }
}
