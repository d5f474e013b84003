//! Where things are: the workspace, the Trunk build in `dist/`, the built
//! `bridge` and `master` binaries, and the screenshot folder.

use std::path::{Path, PathBuf};

/// The workspace root (this crate lives in `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The front end as Trunk built it (both bundles: the player's in
/// `dist/`, the admin's in `dist/admin/`): `dist/`, or `E2E_DIST_DIR` when
/// set (a build of one's own, so two people in one checkout do not
/// overwrite each other's); panics with what to run when it is missing or
/// incomplete.
pub fn dist_dir() -> PathBuf {
    let dist = std::env::var_os("E2E_DIST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("dist"));
    for folder in [dist.clone(), dist.join("admin")] {
        let index = folder.join("index.html");
        let html = std::fs::read_to_string(&index).unwrap_or_else(|e| {
            panic!(
                "the end-to-end tests need the front end built by Trunk, but {} is missing ({e}). \
                 Run `make test` (scripts/test.sh builds it), or `source scripts/env.sh && \
                 cargo fetch && bash scripts/page.sh` in {}",
                index.display(),
                workspace_root().display()
            )
        });
        let has_wasm = std::fs::read_dir(&folder)
            .map(|entries| {
                entries
                    .flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "wasm"))
            })
            .unwrap_or(false);
        assert!(
            has_wasm && html.contains(".wasm"),
            "{} is not a complete Trunk build (no .wasm); run `make test` or `bash scripts/page.sh`",
            folder.display()
        );
    }
    dist
}

/// The cargo profile folder this test binary was built into
/// (`target/<profile>`, from `target/<profile>/deps/e2e-…`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let deps = exe.parent().expect("the test binary is in deps/");
    deps.parent()
        .expect("deps/ is in the profile folder")
        .to_path_buf()
}

/// A workspace binary built next to this test binary; panics with the
/// command that builds it. Tests never run cargo themselves.
pub fn binary(name: &str) -> PathBuf {
    let path = profile_dir().join(name);
    assert!(
        path.is_file(),
        "{} is missing: build it first with `cargo build -p bridge -p master --bins` \
         (same profile and target dir as the tests; scripts/test.sh does)",
        path.display()
    );
    path
}

/// `target/e2e-screenshots/` (in whatever target dir this build uses).
pub fn screenshot_dir() -> PathBuf {
    let dir = profile_dir()
        .parent()
        .expect("the profile folder is in the target dir")
        .join("e2e-screenshots");
    std::fs::create_dir_all(&dir).expect("create the screenshot folder");
    dir
}
