#!/usr/bin/env bash
# The newcomer's first run, timed (docs/benchmarks.md → "A newcomer's first run"), not part of CI:
# packs the built-in demo scene as scripts/demo.sh does (growing, every core) into a fresh
# directory and prints, as the packer publishes each stage, the seconds since packing started;
# at the end the times to the first playable manifest and to the complete scene, and the CPU.
#
#   scripts/bench/first-run.sh [holoquic-pack options…]     e.g. --seconds 2 for a quick look
#
# Environment: OUT (the scene directory, default a fresh one under the temporary directory).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PACK="$ROOT/wasm/build-native/holoquic-pack"
[ -x "$PACK" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/holoquic-first-run.XXXXXX")/demo}"

start=$(date +%s.%N)
first=""
since() { awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
times_file="$(mktemp)"
# The packer's stderr through a pipe: plain progress lines; each "published" line is timed.
/usr/bin/time -f "cpu: %U s user, %S s system, %e s wall" -o "$times_file" \
  "$PACK" demo --grow --out "$OUT" "$@" 2>&1 >/dev/null | while IFS= read -r line; do
  case "$line" in
    *published*)
      t=$(since)
      printf '%7s s  %s\n' "$t" "$line"
      [ -n "$first" ] || { first=$t; echo "first playable manifest after $t s"; } ;;
    progress:*) printf '%7s s  %s\n' "$(since)" "$line" ;;
  esac
done
echo "complete scene after $(since) s"
cat "$times_file"
rm -f "$times_file"
