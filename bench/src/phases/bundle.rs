//! Bundle size: the release `.wasm` as browsers download it, its brotli
//! twin written by `precompress` (what the bridge and nginx serve), against
//! the budget; beside it the raw size and, for comparison, `gzip -9`.

use crate::{
    error::{Error, Result},
    phases::Env,
    report::{Row, Verdict},
};

const FIGURE: &str = "bundle: release .wasm as served, brotli (precompress)";
const GZIP: &str = "bundle: release .wasm, gzip -9 (for comparison)";

/// The budget of the `.wasm`'s brotli twin, in bytes.
const BUDGET_BR: u64 = 240_000;

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
    let name = wasm.file_name().unwrap_or_default().to_string_lossy();
    let kb = |b: u64| b as f64 / 1000.0;
    let share = |b: u64| format!("{:.0} %", b as f64 * 100.0 / raw.max(1) as f64);
    let mut rows = Vec::new();
    let mut br_path = wasm.clone().into_os_string();
    br_path.push(".br");
    match std::fs::metadata(&br_path) {
        Ok(m) => {
            let br = m.len();
            rows.push(Row::new(
                format!("{FIGURE} ({name}.br)"),
                format!("{:.1} KB ({br} bytes)", kb(br)),
                format!("uncompressed {:.1} KB", kb(raw)),
                share(br),
                "≤ 240 KB",
                Verdict::of(br <= BUDGET_BR),
            ));
        }
        Err(_) => rows.push(Row::skipped(
            FIGURE,
            format!("no {name}.br next to it (run `precompress dist`)"),
        )),
    }
    let out = tokio::process::Command::new("gzip")
        .args(["-9", "-c"])
        .arg(&wasm)
        .output()
        .await?;
    if !out.status.success() {
        return Err(Error::Unexpected("gzip -9 failed".into()));
    }
    let gz = out.stdout.len() as u64;
    rows.push(Row::new(
        format!("{GZIP} ({name})"),
        format!("{:.1} KB ({gz} bytes)", kb(gz)),
        format!("uncompressed {:.1} KB", kb(raw)),
        share(gz),
        "-",
        Verdict::Info,
    ));
    Ok(rows)
}
