#!/usr/bin/env bash
# Sets up and starts the whole product: builds the front end with Trunk, then
# runs the bridge, which serves it on http://127.0.0.1:8080 and starts the
# master in-process on 127.0.0.1:51963. Extra arguments go to the bridge
# (e.g. `--master HOST:PORT` to use a master that is already running).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo fetch --locked
trunk build --release
exec cargo run --release -p bridge -- --static dist "$@"
