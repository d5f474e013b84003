//! Bundle size: the player's release `.wasm` (`dist/`) as browsers
//! download it, its brotli twin written by `precompress` (what the bridge
//! and nginx serve), against the budget; beside it the raw size and, for
//! comparison, `gzip -9`; and the admin's bundle (`dist/admin/`, only
//! admins download it), for information.

use std::path::{Path, PathBuf};

use crate::{
    error::{Error, Result},
    phases::Env,
    report::{Row, Verdict},
};

const FIGURE: &str = "bundle: release .wasm as served, brotli (precompress)";
const GZIP: &str = "bundle: release .wasm, gzip -9 (for comparison)";
const ADMIN: &str = "bundle: the admin page's .wasm (dist/admin/), brotli";

/// The budget of the `.wasm`'s brotli twin, in bytes.
const BUDGET_BR: u64 = 240_000;

fn kb(b: u64) -> f64 {
    b as f64 / 1000.0
}

/// The largest `.wasm` directly in `dir`.
fn largest_wasm(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
}

/// The size of `wasm`'s brotli twin, if `precompress` wrote one.
fn brotli_twin(wasm: &Path) -> Option<u64> {
    let mut br_path = wasm.to_path_buf().into_os_string();
    br_path.push(".br");
    std::fs::metadata(&br_path).ok().map(|m| m.len())
}

/// Measures the largest `.wasm` in the front end's build directory, and
/// the admin's beside it.
pub async fn run(env: &Env) -> Result<Vec<Row>> {
    let dir = &env.bins.static_dir;
    let Some(wasm) = largest_wasm(dir) else {
        return Ok(vec![Row::skipped(
            FIGURE,
            format!("no .wasm in {} (run `bash scripts/page.sh`)", dir.display()),
        )]);
    };
    let raw = std::fs::metadata(&wasm)?.len();
    let name = wasm.file_name().unwrap_or_default().to_string_lossy();
    let share = |b: u64| format!("{:.0} %", b as f64 * 100.0 / raw.max(1) as f64);
    let mut rows = Vec::new();
    match brotli_twin(&wasm) {
        Some(br) => {
            rows.push(Row::new(
                format!("{FIGURE} ({name}.br)"),
                format!("{:.1} KB ({br} bytes)", kb(br)),
                format!("uncompressed {:.1} KB", kb(raw)),
                share(br),
                "≤ 240 KB",
                Verdict::of(br <= BUDGET_BR),
            ));
        }
        None => rows.push(Row::skipped(
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
    let admin = largest_wasm(&dir.join("admin"));
    match admin.as_deref().map(|w| (w, brotli_twin(w))) {
        Some((admin, Some(br))) => {
            let raw = std::fs::metadata(admin)?.len();
            let name = admin.file_name().unwrap_or_default().to_string_lossy();
            rows.push(Row::new(
                format!("{ADMIN} ({name}.br)"),
                format!("{:.1} KB ({br} bytes)", kb(br)),
                format!("uncompressed {:.1} KB", kb(raw)),
                format!("{:.0} %", br as f64 * 100.0 / raw.max(1) as f64),
                "-",
                Verdict::Info,
            ));
        }
        _ => rows.push(Row::skipped(
            ADMIN,
            format!(
                "no .wasm with its .br in {} (run `bash scripts/page.sh`, `precompress dist`)",
                dir.join("admin").display()
            ),
        )),
    }
    Ok(rows)
}
