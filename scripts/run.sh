#!/usr/bin/env bash
# Sets up and starts the whole product: builds the front end with Trunk, then
# runs the bridge, which serves it on http://127.0.0.1:8080 and starts the
# master in-process on 127.0.0.1:51963. Extra arguments go to the bridge
# (e.g. `--master HOST:PORT` to use a master that is already running).
#
# Says what it is doing at each step ("[run] …" on stderr) and, once the
# bridge is up, the address to open.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[run] %s\n' "$*" >&2; }

say "installing what is missing (scripts/setup.sh run: the wasm32 target, Trunk, wasm-bindgen, wasm-opt; minutes on a fresh machine, then nothing)"
bash scripts/setup.sh run
source scripts/env.sh
target="${CARGO_TARGET_DIR:-target}"

say "fetching the crates Cargo.lock pins"
cargo fetch --locked
say "building the front end into dist/ (scripts/page.sh: two trunk builds, the player's page and the admin's, optimized for size)"
bash scripts/page.sh
say "building the bridge and the master (cargo build --release -p bridge)"
cargo build --release -p bridge
say "compressing the front end (.br and .gz beside each file in dist/; served by Accept-Encoding)"
"$target/release/precompress" dist >/dev/null
say "starting the bridge, with the master in it (Ctrl-C stops both)"

# The bridge's stdout passes through; its readiness line ("bridge listening
# on http://ADDR master ADDR") is followed by the address to open.
announce() {
  local line url master
  while IFS= read -r line; do
    printf '%s\n' "$line"
    if [[ "$line" =~ ^bridge\ listening\ on\ (http://[^ ]+)\ master\ ([^ ]+) ]]; then
      url="${BASH_REMATCH[1]}" master="${BASH_REMATCH[2]}"
      # A wildcard address is reached through loopback on this machine.
      url="${url/\/\/0.0.0.0:/\/\/127.0.0.1:}"
      url="${url/\/\/\[::\]:/\/\/[::1]:}"
      say "the lobby is up: open $url/ in a browser (game servers register at $master)"
    fi
  done
}
exec "$target/release/bridge" --static dist "$@" > >(announce)
