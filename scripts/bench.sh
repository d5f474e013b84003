#!/usr/bin/env bash
# Runs the benchmarks (see bench/README.md): builds master, bridge and the
# load generator in release mode and the front end with Trunk, then
# `loadgen` starts the real master and bridge on loopback and prints one
# table, every figure beside a baseline measured in the same run.
#
#   bash scripts/bench.sh                 # the full run (the history phase's month of 10,000 servers alone takes about 13 minutes)
#   bash scripts/bench.sh --only relay    # some phases: relay,memory,fanout,page,bundle,scaleout,deltas,soak,history,handover,webhooks,change-cost,push,cards,lighthouse
#   bash scripts/bench.sh --only scale100k  # 100,000 delta viewers (minutes; only when named)
#   bash scripts/bench.sh --smoke         # CI: debug builds, tiny counts, seconds
#
# Master-only detail (reply rebuild cost): cargo bench -p master --bench query
# Reading a 10,000-server list (a bridge with --master): cargo bench -p protocol --bench query_reply
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
target="${CARGO_TARGET_DIR:-target}"

for arg in "$@"; do
  if [ "$arg" = "--smoke" ]; then
    # Checks that every phase still runs, not its speed: the debug builds
    # scripts/test.sh made already (the same selection, so the same
    # features: nothing is compiled again); the page only if dist/ was built.
    cargo build -q --workspace --all-targets
    exec "$target/debug/loadgen" "$@"
  fi
done

cargo build -q --release -p master -p bridge -p bench
if command -v trunk >/dev/null 2>&1; then
  bash scripts/page.sh >&2
  # The .wasm's brotli twin, as the bridge and nginx serve it (the bundle
  # phase checks its budget).
  "$target/release/precompress" dist >/dev/null
else
  echo "[bench] trunk is missing (make setup): page and bundle use dist/ as it is" >&2
fi
# Lighthouse (the lighthouse phase) beside the other npm tools; version 12
# runs on the Node.js that Debian 12 ships.
tools="${LOBBY_TOOLS_DIR:-$HOME/.cache/lobby-tools}"
if [ ! -x "$tools/node_modules/.bin/lighthouse" ] && command -v npm >/dev/null 2>&1; then
  echo "[bench] installing lighthouse@12.8.2 into $tools (npm)" >&2
  npm install --silent --prefix "$tools" lighthouse@12.8.2 >&2 \
    || echo "[bench] lighthouse did not install: its phase is skipped" >&2
fi
exec "$target/release/loadgen" "$@"
