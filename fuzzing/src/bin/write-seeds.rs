//! Writes every target's seeds ([`fuzzing::seeds`]) to `DIR/<target>/`, for
//! `scripts/fuzz.sh` to hand to libFuzzer beside the committed corpus.

use std::{path::PathBuf, process::ExitCode};

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: write-seeds DIR");
        return ExitCode::FAILURE;
    };
    for (target, _) in fuzzing::TARGETS {
        let folder = dir.join(target);
        let written = std::fs::create_dir_all(&folder).and_then(|()| {
            fuzzing::seeds::seeds(target)
                .into_iter()
                .try_for_each(|(name, bytes)| std::fs::write(folder.join(name), bytes))
        });
        if let Err(e) = written {
            eprintln!("write-seeds: {}: {e}", folder.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
