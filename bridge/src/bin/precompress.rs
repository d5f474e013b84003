//! `precompress DIR`: writes `NAME.br` (brotli 11) and `NAME.gz` (gzip -9)
//! beside every file of a Trunk build, once per build, so neither the
//! bridge nor nginx compresses the front end per request. scripts/run.sh,
//! scripts/test.sh and `make release` run it after `scripts/page.sh` (both
//! bundles: `dist/` and `dist/admin/`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

/// Precompresses the front end (brotli and gzip twins beside each file).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The Trunk build to compress.
    #[arg(default_value = "dist")]
    dir: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let report = bridge::http::assets::precompress(&args.dir)
        .with_context(|| format!("cannot precompress {}", args.dir.display()))?;
    let size = |n: Option<u64>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
    for (path, original, br, gz) in &report.files {
        println!(
            "{}: {original} bytes, br {}, gz {}",
            path.display(),
            size(*br),
            size(*gz)
        );
    }
    Ok(())
}
