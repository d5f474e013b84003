//! Log setup shared by the master's and the bridge's binaries, so both
//! behave alike: `RUST_LOG` filters (default `info`), logs go to stderr and
//! stdout stays free for the one machine-readable readiness line.

use tracing_subscriber::EnvFilter;

/// Installs the global tracing subscriber; call once at the start of `main`.
pub fn init() {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
}
