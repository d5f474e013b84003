//! Where the sign-in link of a generated admin token goes: never into the
//! log, which is kept and read by more people than the operator (the
//! journal, a log file). On stdout when stdout is a terminal or a stream of
//! its own; otherwise into a file only its owner can read (mode 0600),
//! whose path is logged and which is removed at exit.

use std::{
    io::{IsTerminal, Write},
    path::{Path, PathBuf},
};

use anyhow::Context;

/// Where [`show`] put the link.
#[derive(Debug)]
pub(crate) enum LinkShown {
    Stdout,
    /// Remove it at exit: the token dies with the process.
    File(PathBuf),
}

impl LinkShown {
    /// Removes the link's file, if there is one.
    pub(crate) fn forget(self) {
        if let Self::File(path) = self {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Shows `link` (`http://…/admin#token=…`) to the operator only.
pub(crate) fn show(link: &str) -> anyhow::Result<LinkShown> {
    // A reader that closed stdout after the readiness line gets the file.
    if stdout_is_private() && print(link).is_ok() {
        tracing::info!(
            "admin token generated for this run; its sign-in link is on stdout (set \
             BRIDGE_ADMIN_TOKEN or --admin-token-file to keep one)"
        );
        return Ok(LinkShown::Stdout);
    }
    let dir = private_dir();
    let path = dir.join(format!("lobby-bridge-{}.admin-link", std::process::id()));
    write_private(&path, link)
        .with_context(|| format!("cannot write the admin sign-in link to {}", path.display()))?;
    tracing::warn!(
        file = %path.display(),
        "admin token generated for this run; stdout goes to the log, so its sign-in \
         link is in this file (owner only, removed at exit); set BRIDGE_ADMIN_TOKEN or \
         --admin-token-file to keep one"
    );
    Ok(LinkShown::File(path))
}

/// The link's line on stdout.
fn print(link: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "admin page: {link}")?;
    stdout.flush()
}

/// systemd's `RuntimeDirectory=` when the service has one, else the
/// temporary directory.
fn private_dir() -> PathBuf {
    std::env::var_os("RUNTIME_DIRECTORY")
        .and_then(|dirs| std::env::split_paths(&dirs).next())
        .filter(|d| d.is_dir())
        .unwrap_or_else(std::env::temp_dir)
}

/// Creates `path` (never an existing file or link) readable by its owner
/// only, with `text` in it.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    writeln!(file, "{text}")?;
    file.sync_all()
}

/// Whether what goes to stdout is seen by the operator only: a terminal,
/// or a stream that is neither stderr's (the log), nor the journal, nor
/// `/dev/null`.
fn stdout_is_private() -> bool {
    if std::io::stdout().is_terminal() {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let Some(out) = identity(std::io::stdout().as_fd()) else {
            return false;
        };
        use std::os::unix::fs::MetadataExt;
        let null = std::fs::metadata("/dev/null")
            .ok()
            .map(|m| (m.dev(), m.ino()));
        let log = identity(std::io::stderr().as_fd());
        ![log, journal_stream(), null].contains(&Some(out))
    }
    #[cfg(not(unix))]
    false
}

/// The device and inode of an open file (a pipe, a socket, a file).
#[cfg(unix)]
fn identity(fd: std::os::fd::BorrowedFd<'_>) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
    let meta = file.metadata().ok()?;
    Some((meta.dev(), meta.ino()))
}

/// The journal's stream, which systemd names in `JOURNAL_STREAM`
/// (`DEVICE:INODE`) when stdout or stderr goes there.
#[cfg(unix)]
fn journal_stream() -> Option<(u64, u64)> {
    let value = std::env::var("JOURNAL_STREAM").ok()?;
    let (dev, ino) = value.split_once(':')?;
    Some((dev.parse().ok()?, ino.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_file_is_new_and_its_owners_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("link");
        write_private(&path, "http://x/admin#token=t").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // An existing file (or a link planted there) is never written.
        assert!(write_private(&path, "again").is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "http://x/admin#token=t\n"
        );
    }
}
