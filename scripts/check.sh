#!/usr/bin/env bash
# The fast loop while changing code: format, clippy (warnings are errors) and
# every test except the end-to-end ones (package `e2e`: real processes and
# headless Chromium). No tool installs, no Trunk build, no browser: run
# `make test` (what CI runs) before you push.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

step() { printf '\n== %s\n' "$*"; }

step "format"
cargo fmt --all -- --check
step "clippy"
cargo clippy --workspace --all-targets -- -D warnings
step "tests (without the end-to-end package e2e)"
cargo test --workspace --exclude e2e
