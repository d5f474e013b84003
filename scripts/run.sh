#!/usr/bin/env bash
# Sets up and starts the product: today the master server on 127.0.0.1:51963.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
exec cargo run --release -p master -- "$@"
