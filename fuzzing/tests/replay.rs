//! Replays every target's committed corpus (`fuzz/corpus/<target>/`), its
//! regression inputs (`fuzz/regressions/<target>/`) and its seeds through
//! the target's body, so `cargo test` checks in seconds, without libFuzzer,
//! that nothing the fuzzer once found or kept fails again.

use std::{
    collections::BTreeSet,
    fs,
    panic::{catch_unwind, AssertUnwindSafe},
    path::{Path, PathBuf},
};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files directly in `dir` (none when it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn names_in(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_corpus_regression_and_seed_input_passes() {
    let dir = fuzz_dir();
    let mut failures = Vec::new();
    let mut replayed = 0;
    for (target, body) in fuzzing::TARGETS {
        let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
        for kind in ["corpus", "regressions"] {
            for path in files(&dir.join(kind).join(target)) {
                let bytes = fs::read(&path).expect("a corpus file is readable");
                inputs.push((path.display().to_string(), bytes));
            }
        }
        for (name, bytes) in fuzzing::seeds::seeds(target) {
            inputs.push((format!("seed {target}/{name}"), bytes));
        }
        for (name, bytes) in inputs {
            replayed += 1;
            if catch_unwind(AssertUnwindSafe(|| body(&bytes))).is_err() {
                failures.push(name);
            }
        }
    }
    eprintln!("replayed {replayed} inputs");
    assert!(failures.is_empty(), "failing inputs: {failures:#?}");
}

#[test]
fn every_target_has_a_fuzz_target_file_and_every_folder_a_target() {
    let dir = fuzz_dir();
    let known: BTreeSet<String> = fuzzing::TARGETS
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let files: BTreeSet<String> = names_in(&dir.join("fuzz_targets"))
        .into_iter()
        .filter_map(|f| f.strip_suffix(".rs").map(str::to_owned))
        .collect();
    assert_eq!(files, known, "fuzz/fuzz_targets/*.rs and fuzzing::TARGETS");
    for kind in ["corpus", "regressions"] {
        let unknown: Vec<String> = names_in(&dir.join(kind))
            .into_iter()
            .filter(|n| !known.contains(n))
            .collect();
        assert!(unknown.is_empty(), "fuzz/{kind}/ has {unknown:?}");
    }
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for name in &known {
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has no [[bin]] {name}"
        );
    }
}
