#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser that reads bytes from outside
# (SECURITY.md, "Fuzzing"). Runs each target of fuzz/ for FUZZ_SECONDS
# (default 60) one after another, on the stable toolchain without a
# sanitizer, then shrinks each corpus (cargo fuzz cmin) and prints what it
# ran and found. Not part of `make test`: CI only replays the committed
# corpora through `cargo test` (fuzzing/tests/replay.rs).
#
#   make fuzz
#   FUZZ_SECONDS=300 FUZZ_TARGETS="frame a2s" bash scripts/fuzz.sh
#
# A finding is left in fuzz/artifacts/<target>/; reproduce it with
# `cargo fuzz run -s none <target> fuzz/artifacts/<target>/<file>`, fix it,
# and keep the input in fuzz/regressions/<target>/ (replayed by cargo test).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

CARGO_FUZZ_VERSION=0.13.2
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-$(ls fuzz/fuzz_targets | sed -n 's/\.rs$//p')}

if ! cargo fuzz --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
  echo "== installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install cargo-fuzz --version "=$CARGO_FUZZ_VERSION" --locked
fi

# The seeds are rebuilt from the repository's samples (fuzzing::seeds).
rm -rf fuzz/seeds
cargo run -q -p fuzzing --bin write-seeds -- fuzz/seeds

# Longest input the fuzzer makes: the A2S target needs room for real
# packet dumps; elsewhere shorter inputs keep the corpora small.
max_len() {
  case $1 in
    a2s) echo 4096 ;;
    *) echo 1024 ;;
  esac
}

# Every file counts, however small: the corpora are committed.
files() { find "$1" -type f | wc -l; }
bytes() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }

logs=$(mktemp -d)
rows=()
failed=0
for t in $targets; do
  corpus=fuzz/corpus/$t
  mkdir -p "$corpus" "fuzz/seeds/$t"
  before=$(files "$corpus")
  echo "== $t: ${seconds}s (log: $logs/$t.log)"
  status=ok
  if ! cargo fuzz run -s none "$t" "$corpus" "fuzz/seeds/$t" -- \
    -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 \
    -print_final_stats=1 >"$logs/$t.log" 2>&1; then
    artifact=$(grep -o 'fuzz/artifacts/[^ ]*' "$logs/$t.log" | tail -n 1 || true)
    status="FOUND ${artifact:-(see log)}"
    failed=1
    grep -m 1 -A 8 'panicked at\|ERROR: libFuzzer' "$logs/$t.log" || tail -n 20 "$logs/$t.log"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log" | tail -n 1)
  # Keep a small set of inputs that covers every edge the corpus reaches
  # (set cover over edges, not over hit counts: a few hundred files, not
  # thousands).
  cargo fuzz cmin -s none "$t" "$corpus" -- -max_len="$(max_len "$t")" \
    -set_cover_merge=1 -use_counters=0 >"$logs/$t.cmin.log" 2>&1 ||
    echo "   cmin failed (log: $logs/$t.cmin.log)"
  rows+=("$(printf '%-12s %6s %12s %9s %9s %9s  %s' "$t" "$seconds" "${execs:-?}" \
    "$before" "$(files "$corpus")" "$(bytes "$corpus")" "$status")")
done

echo
printf '%-12s %6s %12s %9s %9s %9s  %s\n' target seconds executions "corpus<" "corpus>" bytes findings
for r in "${rows[@]}"; do echo "$r"; done
echo "(corpus<: files before the run; corpus>: after it and cmin; logs in $logs)"
exit "$failed"
