#!/usr/bin/env bash
# Sets up the tools, then runs every check and test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
source scripts/env.sh

step() { printf '\n== %s\n' "$*"; }

step "dependencies exactly as Cargo.lock pins them"
cargo fetch --locked
step "format"
cargo fmt --all -- --check
step "clippy"
cargo clippy --workspace --all-targets -- -D warnings
step "protocol builds for wasm32 without tokio"
cargo check -p protocol --target wasm32-unknown-unknown
step "front end (Trunk release build into dist/, served by the end-to-end tests)"
trunk build --release
step "binaries the end-to-end tests start (bridge, master)"
cargo build -p bridge -p master --bins
step "precompressed front end (dist/**.br, .gz; served by the bridge and nginx)"
"${CARGO_TARGET_DIR:-target}/debug/precompress" dist >/dev/null
step "tests"
cargo test --workspace
step "front-end component tests in headless Chromium (wasm-bindgen-test)"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  CHROMEDRIVER="$(command -v chromedriver)" \
  cargo test -p frontend --target wasm32-unknown-unknown
step "benchmark smoke run (checks it runs, not its speed)"
QUERY_BENCH_SERVERS=200 QUERY_BENCH_ROUNDS=20 cargo bench -p master --bench query
bash scripts/bench.sh --smoke
