#!/usr/bin/env bash
# Sets up and starts the whole product: builds the front end with Trunk, then
# runs the bridge, which serves it on http://127.0.0.1:8080 and starts the
# master in-process on 127.0.0.1:51963. Extra arguments go to the bridge
# (e.g. `--master HOST:PORT` to use a master that is already running).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh run
source scripts/env.sh
cargo fetch --locked
trunk build --release
# .br/.gz beside each file, served by Accept-Encoding (see bridge/src/assets.rs).
cargo run -q --release -p bridge --bin precompress -- dist >/dev/null
exec cargo run --release -p bridge -- --static dist "$@"
