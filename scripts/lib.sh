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

ORIGIN_BIN="$ROOT/server/target/release/holoquic-origin"
PACK_BIN="$ROOT/wasm/build-native/holoquic-pack"
export ORIGIN_BIN PACK_BIN
