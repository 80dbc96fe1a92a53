# Shared helpers for holoquic's scripts (sourced, not run).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
export CARGO_TERM_COLOR=never
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"   # Debian emscripten needs acorn from here

log()  { printf '\033[1;34m[holoquic]\033[0m %s\n' "$*" >&2; }
die()  { printf '\033[1;31m[holoquic] error:\033[0m %s\n' "$*" >&2; exit 1; }
step() { log "── $*"; }

# Run "$@" and print how long it took.
timed() {
  local t0=$SECONDS
  "$@"
  log "   done in $((SECONDS - t0)) s: $*"
}

# Waits (up to 10 s) until an origin's log file shows its ready line; dies with the log's tail if not.
wait_origin_ready() {
  local log=$1 i
  for i in $(seq 1 100); do
    grep -q '^holoquic-origin: listening' "$log" 2>/dev/null && return 0
    sleep 0.1
  done
  die "origin did not start: $(tail -5 "$log")"
}

# Dies unless each named tool is an executable in the build directory $1 (a benchmark's
# prerequisites: the native build that scripts/setup.sh makes).
require_tools() {
  local dir=$1 tool
  shift
  for tool in "$@"; do
    [ -x "$dir/$tool" ] || die "missing $dir/$tool: build first (scripts/setup.sh)"
  done
}

ORIGIN_BIN="$ROOT/server/target/release/holoquic-origin"
PACK_BIN="$ROOT/wasm/build-native/holoquic-pack"
export ORIGIN_BIN PACK_BIN
