#!/usr/bin/env bash
# Installs every tool the build and the tests need, skipping what is already
# there at the right version. Safe to run again; CI and `make setup` call it.
set -euo pipefail

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen version in Cargo.lock
BINARYEN_VERSION=132.0.0
TOOLS_DIR="${LOBBY_TOOLS_DIR:-$HOME/.cache/lobby-tools}"

log() { printf '[setup] %s\n' "$*" >&2; }

# Faster cargo installs on 2 cores; the tools' speed does not matter.
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
for comp in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$comp"; then
    rustup component add "$comp"
  fi
done

# fonts-wqy-zenhei: CJK glyphs, so names like "轰炸机人" render in headless
# Chromium (the end-to-end screenshots).
if ! { command -v chromium && command -v chromedriver; } >/dev/null 2>&1 \
  || ! dpkg -s fonts-wqy-zenhei >/dev/null 2>&1; then
  log "installing chromium, chromium-driver and fonts-wqy-zenhei from apt"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver fonts-wqy-zenhei >/dev/null
fi

if [ "$(trunk --version 2>/dev/null || true)" != "trunk $TRUNK_VERSION" ]; then
  log "installing trunk $TRUNK_VERSION (takes ~10 min on 2 cores)"
  cargo install trunk --version "=$TRUNK_VERSION" --locked
fi

if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  # Without --locked: its lockfile pins a crate the registry here lacks.
  cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" --force
fi

if [ ! -x "$TOOLS_DIR/node_modules/.bin/wasm-opt" ] \
  || ! "$TOOLS_DIR/node_modules/.bin/wasm-opt" --version | grep -q "version ${BINARYEN_VERSION%%.*}"; then
  log "installing wasm-opt from npm binaryen@$BINARYEN_VERSION"
  mkdir -p "$TOOLS_DIR"
  npm install --silent --prefix "$TOOLS_DIR" "binaryen@$BINARYEN_VERSION"
fi
log "tools ready (wasm-opt in $TOOLS_DIR/node_modules/.bin)"
