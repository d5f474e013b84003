#!/usr/bin/env bash
# Proves that a newcomer's first `make test` goes green: empties this
# machine's tools and caches the way a fresh machine has them, then runs
# `make test` in a clean clone of this repository's HEAD.
#
#   bash scripts/fresh-machine.sh --yes [RUNS]   # RUNS clean runs (default 1),
#                                                # each on freshly emptied tools
#
# What it removes (what `scripts/setup.sh test` installs, and the caches a
# build fills), and nothing else:
# - the Rust tools `cargo install`ed by setup.sh (trunk, wasm-bindgen-cli,
#   geckodriver) and the wasm32 target;
# - cargo's downloaded crates (~/.cargo/registry, ~/.cargo/git);
# - the npm tools folder (${LOBBY_TOOLS_DIR:-~/.cache/lobby-tools}:
#   wasm-opt, axe-core) and npm's download cache;
# - the Debian packages setup.sh installs (Chromium and chromedriver, the
#   CJK font, nginx and its brotli module, PostgreSQL, Firefox ESR) and
#   apt's downloaded archives.
# The toolchain itself (rustup, cargo, rustc, rustfmt, clippy,
# cargo-nextest), Node.js and npm stay: a fresh machine of this kind has
# them. The clone goes into a new temporary directory beside this one, with
# its own target directory; this checkout is not touched.
#
# Each run's log is kept beside the clone (the path is printed); its
# "[time]" lines are the step table of docs/performance.md ("A fresh
# machine"). Needs root and apt-get, as setup.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

if [ "${1:-}" != "--yes" ]; then
  sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//' >&2
  echo "Removes tools from this machine: run it with --yes." >&2
  exit 64
fi
runs="${2:-1}"
log() { printf '[fresh] %s\n' "$*" >&2; }

# PostgreSQL's client (psql) comes with the machine; its server does not.
apt_packages=(chromium chromium-driver fonts-wqy-zenhei nginx nginx-common
  libnginx-mod-http-brotli-static postgresql postgresql-15 postgresql-common
  firefox-esr)

empty_tools() {
  log "removing the Rust tools setup.sh installs"
  for tool in trunk wasm-bindgen-cli geckodriver; do
    cargo uninstall "$tool" >/dev/null 2>&1 || true
  done
  rustup target remove wasm32-unknown-unknown >/dev/null 2>&1 || true
  log "emptying cargo's crate cache, the npm tools and npm's cache"
  rm -rf "${CARGO_HOME:-$HOME/.cargo}/registry" "${CARGO_HOME:-$HOME/.cargo}/git"
  rm -rf "${LOBBY_TOOLS_DIR:-$HOME/.cache/lobby-tools}"
  npm cache clean --force >/dev/null 2>&1 || true
  log "removing the Debian packages setup.sh installs"
  # Clusters a test left running would hold the packages' files.
  pkill -u postgres postgres >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${apt_packages[@]}" >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get autoremove -y -qq >/dev/null 2>&1 || true
  apt-get clean
}

for run in $(seq 1 "$runs"); do
  empty_tools
  dir="$(mktemp -d "$repo/../fresh-run.XXXXXX")"
  log "run $run of $runs: a clean clone of HEAD in $dir"
  git clone -q "$repo" "$dir/lobby"
  # Nothing of this checkout's build may leak in.
  if (cd "$dir/lobby" && env -u CARGO_TARGET_DIR -u RUSTC_WORKSPACE_WRAPPER make test) \
    >"$dir/make-test.log" 2>&1; then
    log "run $run: green ($dir/make-test.log)"
  else
    log "run $run: FAILED ($dir/make-test.log)"
    grep '^\[time\]' "$dir/make-test.log" >&2 || true
    exit 1
  fi
  grep '^\[time\]' "$dir/make-test.log" >&2 || true
done
