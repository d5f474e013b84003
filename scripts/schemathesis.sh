#!/usr/bin/env bash
# Schemathesis against the real bridge: property-based requests generated
# from GET /api/openapi.json, the way an integrator's tools read it, every
# check on (status codes, content types, headers and bodies as documented,
# no 5xx, schema-valid requests accepted and invalid ones refused; the
# exceptions and their reasons are in scripts/schemathesis.toml), the
# stateful phase included (links between operations: a webhook created,
# read, changed, deleted). Starts the debug bridge (built by the test
# run, or `cargo build -p bridge`) on a free loopback port with a scratch
# data directory, the admin token and the API budget lifted, runs a fixed
# number of test cases (about 5,000 with the defaults; the same seed makes
# the same requests on any machine), and stops it. All of it in a network
# namespace with loopback only (below).
#
#   bash scripts/schemathesis.sh              # uses target/debug/bridge
#   ST_MAX_EXAMPLES=50 bash scripts/schemathesis.sh   # fewer, for a quick look
set -euo pipefail
cd "$(dirname "$0")/.."

# The generated requests name hosts of every kind (webhook URLs, push
# endpoints), which the bridge looks up to check where they lead: the run
# happens in a network namespace of its own whose only interface is
# loopback, so no lookup and no connection leaves the machine. Needs root
# (or user namespaces) and iproute2's `ip`.
if [ -z "${LOBBY_ST_ISOLATED:-}" ]; then
  if ! unshare --net true 2>/dev/null; then
    echo "[schemathesis] cannot make a network namespace (unshare --net): run as root" >&2
    exit 2
  fi
  exec env LOBBY_ST_ISOLATED=1 unshare --net bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi
TOOLS_DIR="${LOBBY_TOOLS_DIR:-$HOME/.cache/lobby-tools}"
st="$TOOLS_DIR/schemathesis/bin/st"
bridge="${CARGO_TARGET_DIR:-target}/debug/bridge"
[ -x "$st" ] || { echo "schemathesis is missing: bash scripts/setup.sh test" >&2; exit 2; }
[ -x "$bridge" ] || { echo "$bridge is missing: cargo build -p bridge" >&2; exit 2; }

scratch="$(mktemp -d)"
token="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
bridge_pid=""
cleanup() {
  if [ -n "$bridge_pid" ]; then
    kill "$bridge_pid" 2>/dev/null || true
    wait "$bridge_pid" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# The readiness line ("bridge listening on http://ADDR master ADDR") names
# the port the kernel chose.
BRIDGE_ADMIN_TOKEN="$token" RUST_LOG=warn NO_COLOR=1 "$bridge" \
  --listen 127.0.0.1:0 --embedded-master 127.0.0.1:0 \
  --data-dir "$scratch/data" --static "$scratch" \
  --api-rate 1000000 --api-burst 1000000 \
  --auth-failures 1000000 --auth-failures-total 1000000 \
  --history-interval 1s \
  --push-contact mailto:schemathesis@lobby.example \
  >"$scratch/stdout" 2>"$scratch/bridge.log" &
bridge_pid=$!
line=""
for _ in $(seq 300); do
  line="$(head -n 1 "$scratch/stdout")"
  [ -n "$line" ] && break
  kill -0 "$bridge_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$line" ] || { echo "the bridge did not start:" >&2; cat "$scratch/bridge.log" >&2; exit 1; }
addr="$(printf '%s\n' "$line" | awk '{print $4}')"
echo "[schemathesis] bridge at $addr"

status=0
config="$PWD/scripts/schemathesis.toml"
# Schemathesis keeps a cache (.schemathesis/) where it runs: in the
# scratch directory, not the tree.
cd "$scratch"
# The run is bounded by its number of test cases, not by time: each phase
# runs each operation's cases once (--max-examples of them in the fuzzing
# phase; with --max-time, fuzzing and the stateful phase would repeat until
# the time is spent, so a busy machine would test less). The same seed and
# count make the same requests on any machine, fast or slow; `timeout`
# only ends a hung run.
timeout --kill-after=5 "${ST_HUNG:-900}" \
  "$st" --config-file "$config" run "$addr/api/openapi.json" \
  --url "$addr" \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "${ST_MAX_EXAMPLES:-200}" \
  --header "Authorization: Bearer $token" \
  --request-timeout 10 \
  --workers 1 \
  --seed "${ST_SEED:-1}" \
  --no-color || status=$?
if [ "$status" -ne 0 ]; then
  echo "[schemathesis] failed ($status); the bridge's log:" >&2
  tail -n 40 "$scratch/bridge.log" >&2
fi
exit "$status"
