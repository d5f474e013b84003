# Sourced by scripts/setup.sh and scripts/test.sh: names each step and times
# it, so a slow run says where its time went.
#
#   steps_begin test           # once; the label prefixes every line
#   step "clippy"              # ends the step before, starts this one
#   step_background page "front end" bash scripts/page.sh
#   ...                        # (other steps run meanwhile)
#   step_wait page             # its output, its time; fails if it failed
#
# Each step's end prints a line starting with "[time]": its wall time and
# the CPU time (user + system) of what it ran. At exit, on failure too, a
# table of every step follows; `grep '^\[time\]' log` reads them from a
# run's log. CPU time says what a step costs even on a busy machine, where
# wall times stretch; on 2 idle cores a step's wall time is at least half
# its CPU time. Steps run in the background are marked "∥": their wall time
# overlaps the steps run meanwhile, and the total is the script's own.

_steps_label=
_steps_names=()
_steps_walls=()
_steps_cpus=()
_steps_current=
_steps_started=
_steps_cpu_started=
_steps_cpu_us=0
_steps_begun=
_steps_dir=
declare -A _steps_job_pids=()
declare -A _steps_bg_counted=()
_steps_bg_us=0

# Microseconds since the epoch, without forking `date`.
_steps_now() {
  local t="${EPOCHREALTIME/[.,]/}"
  printf '%s' "$((10#$t))"
}

# Sets _steps_cpu_us: the CPU time (user + system), in microseconds, of
# this shell's finished children. Not a function to call as $(…): `times`
# must run in this shell, a subshell counts its own children.
_steps_cpu() {
  local f="$_steps_dir/times.$BASHPID" u s
  times >"$f"
  { read -r u s && read -r u s; } <"$f"
  _steps_cpu_us=$(($(_steps_us "$u") + $(_steps_us "$s")))
}

# "1m2.345s" as microseconds.
_steps_us() {
  local m="${1%%m*}" rest="${1#*m}"
  rest="${rest%s}"
  local sec="${rest%%[.,]*}" frac="${rest#*[.,]}000000"
  printf '%s' "$((10#$m * 60000000 + 10#$sec * 1000000 + 10#${frac:0:6}))"
}

# Microseconds as seconds with one decimal.
_steps_secs() {
  printf '%d.%d' "$(($1 / 1000000))" "$(($1 / 100000 % 10))"
}

# Microseconds as minutes and seconds (m:ss).
_steps_mmss() {
  local s=$(($1 / 1000000))
  printf '%d:%02d' "$((s / 60))" "$((s % 60))"
}

_steps_record() { # NAME WALL CPU
  _steps_names+=("$1")
  _steps_walls+=("$2")
  _steps_cpus+=("$3")
  printf '[time] %s: %s s wall, %s s CPU: %s\n' "$_steps_label" "$(_steps_secs "$2")" \
    "$(_steps_secs "$3")" "$1"
}

# The CPU time of background steps whose process this shell has reaped
# since the last call (each counted once), in _steps_bg_us. `times`
# counts a background step in whatever step runs when it ends: that
# step's figure must not carry it, since the background step has a row of
# its own. A step counts once it has written its figures and its process
# is gone (reaped: `times` has it).
_steps_reaped_bg() {
  local done id status wall cpu
  _steps_bg_us=0
  for done in "$_steps_dir"/*.done; do
    [ -e "$done" ] || continue
    id="${done##*/}"
    id="${id%.done}"
    [ -z "${_steps_bg_counted[$id]:-}" ] || continue
    ! kill -0 "${_steps_job_pids[$id]}" 2>/dev/null || continue
    read -r status wall cpu <"$done"
    _steps_bg_counted["$id"]=1
    _steps_bg_us=$((_steps_bg_us + cpu))
  done
}

_steps_end_current() {
  if [ -n "$_steps_current" ]; then
    _steps_cpu
    _steps_reaped_bg
    _steps_record "$_steps_current" "$(($(_steps_now) - _steps_started))" \
      "$((_steps_cpu_us - _steps_cpu_started - _steps_bg_us))"
    _steps_current=
  fi
}

# The table, at exit: every step, then the whole script (and where it
# stopped if it failed).
_steps_report() {
  local status=$?
  local failed="$_steps_current"
  _steps_end_current
  [ -n "$_steps_begun" ] || return "$status"
  local pidfile
  for pidfile in "$_steps_dir"/*.pid; do
    # A background step nobody waited for (the script failed first) is
    # stopped with everything it started.
    [ -e "$pidfile" ] && [ ! -e "${pidfile%.pid}.done" ] || continue
    kill -TERM -- "-$(cat "$pidfile")" 2>/dev/null || true
  done
  local total=$(($(_steps_now) - _steps_begun)) i
  _steps_cpu
  printf '\n[time] ---- %s: each step, wall time and CPU time ----\n' "$_steps_label"
  printf '[time] %s %8s %6s %8s  %s\n' "$_steps_label" "wall s" "m:ss" "CPU s" "step"
  for i in "${!_steps_names[@]}"; do
    printf '[time] %s %8s %6s %8s  %s\n' "$_steps_label" "$(_steps_secs "${_steps_walls[$i]}")" \
      "$(_steps_mmss "${_steps_walls[$i]}")" "$(_steps_secs "${_steps_cpus[$i]}")" "${_steps_names[$i]}"
  done
  printf '[time] %s %8s %6s %8s  total' "$_steps_label" "$(_steps_secs "$total")" \
    "$(_steps_mmss "$total")" "$(_steps_secs "$_steps_cpu_us")"
  if [ "$status" -ne 0 ]; then
    printf ' (FAILED with status %s%s)' "$status" "${failed:+ in \"$failed\"}"
  fi
  printf '\n'
  rm -rf "$_steps_dir"
  return "$status"
}

# Starts timing; LABEL prefixes every line ("setup", "test").
steps_begin() {
  _steps_label="$1"
  _steps_dir=$(mktemp -d)
  _steps_begun=$(_steps_now)
  trap _steps_report EXIT
}

# Ends the step before and starts NAME.
step() {
  _steps_end_current
  printf '\n== [%s] %s\n' "$_steps_label" "$*"
  _steps_current="$*"
  _steps_started=$(_steps_now)
  _steps_cpu
  _steps_cpu_started=$_steps_cpu_us
}

# Runs COMMAND... in the background as the step NAME, its output kept for
# `step_wait ID`; the steps after it run meanwhile.
step_background() { # ID NAME COMMAND...
  local id="$1" name="$2" dir="$_steps_dir"
  shift 2
  _steps_end_current
  printf '\n== [%s] %s (in the background)\n' "$_steps_label" "$name"
  printf '%s' "$name" >"$dir/$id.name"
  (
    trap - EXIT
    start=$(_steps_now)
    status=0
    # In a process group of its own (job control puts each job in one), so
    # that a failed script stops it (and what it started) at exit. A job,
    # not `setsid`: COMMAND may be one of the script's shell functions.
    set -m
    "$@" >"$dir/$id.log" 2>&1 &
    printf '%s' "$!" >"$dir/$id.pid"
    wait "$!" || status=$?
    _steps_cpu
    printf '%s %s %s\n' "$status" "$(($(_steps_now) - start))" "$_steps_cpu_us" >"$dir/$id.done"
  ) &
  _steps_job_pids["$id"]=$!
}

# Waits for the background step ID, prints its output and its time; exits
# with its status if it failed.
step_wait() { # ID
  local id="$1" dir="$_steps_dir" name status=1 wall=0 cpu=0 from
  _steps_end_current
  name=$(cat "$dir/$id.name")
  printf '\n== [%s] waiting for %s\n' "$_steps_label" "$name"
  from=$(_steps_now)
  wait "${_steps_job_pids[$id]}" || true
  # Reaped here, between steps: no step's figure holds it.
  _steps_bg_counted["$id"]=1
  [ ! -e "$dir/$id.done" ] || read -r status wall cpu <"$dir/$id.done"
  cat "$dir/$id.log"
  _steps_record "$name ∥" "$wall" "$cpu"
  # Its CPU time is counted above, not again as this shell's.
  _steps_record "(waiting for it)" "$(($(_steps_now) - from))" 0
  if [ "$status" -ne 0 ]; then
    printf '[%s] %s failed (status %s)\n' "$_steps_label" "$name" "$status"
    exit "$status"
  fi
}
