#!/usr/bin/env bash
# Runs the benchmarks and prints their tables (figures beside a baseline).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo bench -p master --bench query
