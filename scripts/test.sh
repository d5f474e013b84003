#!/usr/bin/env bash
# Sets up the tools, then runs every check and test. CI runs exactly this.
#
# Each step prints its wall and CPU time ("[time]" lines), and the run ends
# with a table of them all (scripts/steps.sh; docs/performance.md, "Test
# suite"). What keeps it short on 2 cores:
# - the workspace is built once, in one profile and one feature set, for
#   the tests, the binaries they start and the benchmarks' smoke runs
#   (`cargo build --workspace --all-targets`; `-p` selections unify other
#   features, so they, like a release build, compile the shared crates
#   again);
# - clippy's lints run inside that build: clippy-driver compiles the
#   workspace's own crates as cargo clippy would run it (the same lints,
#   warnings denied), but to binaries, so the dependencies are compiled
#   once instead of once checked and once built. Every later cargo command
#   on the host keeps the same wrapper, or cargo would build the
#   workspace's crates again without it;
# - the front end's release builds (its own profile and target; the
#   player's bundle, then the admin's, which reuses the compiled library and
#   only links again) run in the background beside that build: cargo locks
#   each profile's directory, not the whole target dir;
# - the tests run under cargo-nextest (.config/nextest.toml): every test is
#   a process of its own, so the other crates' tests run beside the
#   end-to-end ones, which mostly wait on browsers, instead of after them;
# - the load generator's smoke run (real bridges, mostly waiting on
#   timers), Schemathesis (a fixed number of test cases) and the wasm32
#   builds that only the component tests need run in the background
#   beside the tests, which leave a core idle most of the time.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh
steps_begin test

step "setup: tools (scripts/setup.sh test, which prints a table of its own steps)"
bash scripts/setup.sh test
source scripts/env.sh
target="${CARGO_TARGET_DIR:-target}"

step "dependencies exactly as Cargo.lock pins them"
cargo fetch --locked
step "format"
cargo fmt --all -- --check
step_background page "front end: Trunk release builds into dist/, the player's and the admin's bundle (served by the end-to-end tests)" \
  bash scripts/page.sh

# From here on every cargo command builds for the host through clippy (see
# the top of this file): `cargo clippy -- -D warnings` passes the same two
# variables to cargo check.
RUSTC_WORKSPACE_WRAPPER="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)"
# Empty, cargo would build without the lints and pass: stop instead.
: "${RUSTC_WORKSPACE_WRAPPER:?clippy-driver not found (rustup component add clippy)}"
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
step "build with clippy's lints, warnings denied: tests, binaries, benchmarks (dev profile, one feature set)"
cargo build --workspace --all-targets
step_wait page
step "precompressed front end (dist/**.br, .gz; served by the bridge and nginx)"
"$target/debug/precompress" dist >/dev/null
# Beside the tests (its own bridges and free ports): every wait in both
# is on a signal the product gives, bounded only against a hang.
step_background loadgen "load generator smoke run (every phase runs, tiny; the dev build above)" \
  bash scripts/bench.sh --smoke
# Schemathesis too: its run is a fixed number of test cases (the same
# requests however busy the machine), so beside the tests it does the
# same work, in a core the tests leave idle.
step_background api "API: Schemathesis against the debug bridge, from its OpenAPI document (scripts/schemathesis.sh, a fixed number of test cases)" \
  bash scripts/schemathesis.sh
# And the wasm32 builds, which only the component tests after them need
# (another profile directory, so cargo builds it beside the tests'; without
# clippy's wrapper, as every wasm32 build).
step_background wasm "protocol checked for wasm32 without tokio; the front-end component tests built (wasm32)" \
  env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS bash -c \
  'cargo check -p protocol --target wasm32-unknown-unknown && cargo test -p frontend --target wasm32-unknown-unknown --no-run'
step "tests: every test target of the workspace (cargo nextest)"
cargo nextest run --workspace
step "the benchmarks' smoke runs (harness = false: cargo test runs them, tiny)"
# The master's query round trip, reading a list reply.
QUERY_BENCH_SERVERS=200 QUERY_BENCH_ROUNDS=20 REPLY_BENCH_SERVERS=200 REPLY_BENCH_ROUNDS=3 \
  cargo test --workspace --bench '*'
step "doc tests"
cargo test --workspace --doc
step_wait wasm
step "front-end component tests in headless Chromium (wasm-bindgen-test)"
env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  CHROMEDRIVER="$(command -v chromedriver)" \
  WASM_BINDGEN_TEST_TIMEOUT=300 WASM_BINDGEN_TEST_DRIVER_TIMEOUT=60 \
  cargo test -p frontend --target wasm32-unknown-unknown
step_wait api
step_wait loadgen
