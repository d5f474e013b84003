//! Bundle size: the release `.wasm` gzipped at level 9 (`gzip -9`), beside
//! its raw size.

use crate::{
    error::{Error, Result},
    phases::Env,
    report::{Row, Verdict},
};

const FIGURE: &str = "bundle: release .wasm, gzip -9";

/// Measures the largest `.wasm` in the front end's build directory.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let dir = &env.bins.static_dir;
    let wasm = std::fs::read_dir(dir)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    let Some(wasm) = wasm else {
        return Ok(vec![Row::skipped(
            FIGURE,
            format!(
                "no .wasm in {} (run `trunk build --release`)",
                dir.display()
            ),
        )]);
    };
    let raw = std::fs::metadata(&wasm)?.len();
    let out = tokio::process::Command::new("gzip")
        .args(["-9", "-c"])
        .arg(&wasm)
        .output()
        .await?;
    if !out.status.success() {
        return Err(Error::Unexpected("gzip -9 failed".into()));
    }
    let gz = out.stdout.len() as u64;
    let name = wasm.file_name().unwrap_or_default().to_string_lossy();
    Ok(vec![Row::new(
        format!("{FIGURE} ({name})"),
        format!("{:.1} KB ({gz} bytes)", gz as f64 / 1000.0),
        format!("uncompressed {:.1} KB", raw as f64 / 1000.0),
        format!("{:.0} %", gz as f64 * 100.0 / raw.max(1) as f64),
        "≤ 250 KB",
        Verdict::of(gz <= 250_000),
    )])
}
