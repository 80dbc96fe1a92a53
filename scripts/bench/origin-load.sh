#!/usr/bin/env bash
# Origin benchmarks on loopback (docs/benchmarks.md → "Origin under load"), not part of CI:
#
#   scripts/bench/origin-load.sh sessions [N…]   N concurrent WebTransport sessions of the demo
#                                               scene each (default 10 100 300), one run per N
#   scripts/bench/origin-load.sh flood          the origin's RSS while junk UDP datagrams flood it
#
# Environment: CONTENT (a content root holding demo/, default the packed e2e scene),
# SECONDS_EACH (60), QUALITY (rung index or top; default top), PORT (14433), OUT (a directory
# for the JSON reports, default a fresh one under the temporary directory), EXTRA (more
# holoquic-load options, e.g. "--reliable-fraction 1").
#
# The origin runs with its per-IP limits raised by its flags (every session comes from
# 127.0.0.1), its access log off; the load client runs beside it on the same machine.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="$ROOT/server/target/release"
CONTENT="${CONTENT:-$ROOT/.holoquic/e2e-content}"
SECONDS_EACH="${SECONDS_EACH:-60}"
QUALITY="${QUALITY:-top}"
PORT="${PORT:-14433}"
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/holoquic-origin-load.XXXXXX")}"
EXTRA="${EXTRA:-}"
mkdir -p "$OUT"

[ -x "$BIN/holoquic-origin" ] && [ -x "$BIN/holoquic-load" ] || { echo "build first: (cd server && cargo build --release)" >&2; exit 1; }
[ -f "$CONTENT/demo/manifest.mpd" ] || { echo "no demo scene under $CONTENT (CONTENT=… or pack one: holoquic-pack demo --out DIR/demo)" >&2; exit 1; }

ORIGIN_PID=""
start_origin() {
  "$BIN/holoquic-origin" --listen "127.0.0.1:$PORT" --content "$CONTENT" --access-log-format off \
    --max-connections 4096 --max-connections-per-ip 4096 --max-handshakes-per-ip 1024 \
    >"$OUT/origin.out" 2>"$OUT/origin.err" &
  ORIGIN_PID=$!
  for _ in $(seq 100); do grep -q listening "$OUT/origin.out" 2>/dev/null && return; sleep 0.1; done
  echo "the origin did not start:" >&2; cat "$OUT/origin.err" >&2; exit 1
}
stop_origin() { [ -n "$ORIGIN_PID" ] && kill "$ORIGIN_PID" 2>/dev/null && wait "$ORIGIN_PID" 2>/dev/null; ORIGIN_PID=""; }
trap stop_origin EXIT
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }

run_sessions() {
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  local counts=("$@")
  [ ${#counts[@]} -gt 0 ] || counts=(10 100 300)
  for n in "${counts[@]}"; do
    start_origin
    local cpu0; cpu0=$(cpu_s "$ORIGIN_PID")
    # shellcheck disable=SC2086
    /usr/bin/time -f "%U %S" -o "$OUT/sessions-$n.time" \
      "$BIN/holoquic-load" --origin "127.0.0.1:$PORT" --sessions "$n" --duration "$SECONDS_EACH" --quality "$QUALITY" \
      --ramp "$(awk -v n="$n" 'BEGIN { r = n / 50; print (r < 1 ? 1 : r) }')" --origin-pid "$ORIGIN_PID" --interval 10 \
      --json $EXTRA >"$OUT/sessions-$n.json" 2>"$OUT/sessions-$n.progress" || true
    local cpu1; cpu1=$(cpu_s "$ORIGIN_PID")
    echo "== $n sessions × ${SECONDS_EACH} s, rung $QUALITY: origin CPU $(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.1f", b - a }') s, load client CPU $(awk '{ printf "%.1f", $1 + $2 }' "$OUT/sessions-$n.time") s"
    summarize "$OUT/sessions-$n.json"
    stop_origin
    sleep 2
  done
  echo "reports: $OUT"
}

summarize() {
    python3 - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
t, m = r["total"], r.get("origin_memory") or {}
l = t["latency_ms"]
print(f"sessions {r['sessions_opened']}/{r['sessions']} opened, {r['sessions_failed']} failed; objects {t['requested']}: "
      f"{t['on_time']} on time, {t['late']} late, {t['lost']} lost (deadline {t['lost_deadline']}, status {t['statuses']}, protocol {t['lost_protocol']}, session {t['lost_session']}, unsent {t['lost_unsent']}); "
      f"latency p50 {l['p50']:.1f} p95 {l['p95']:.1f} p99 {l['p99']:.1f} max {l['max']:.1f} ms; {t['throughput_mbit_s']:.0f} Mbit/s; "
      f"{t['repair_requests']} repair requests")
if m:
    s = [kb / 1024 for _, kb in m["samples"]]
    print(f"origin RSS MB: start {m['start_kb']/1024:.1f}, max {m['max_kb']/1024:.1f}, end {m['end_kb']/1024:.1f}; "
          f"(max - start) / sessions {(m['max_kb'] - m['start_kb']) / 1024 / r['sessions']:.2f} MB; samples {' '.join(f'{x:.0f}' for x in s)}")
EOF
}

# The flood runs beside FLOOD_SESSIONS (default 10) sessions of the demo, which must keep
# getting their objects on time while the origin reads at most its budget of datagrams a round.
run_flood() {
  local sessions="${FLOOD_SESSIONS:-10}"
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  start_origin
  echo "origin RSS before: $(rss_kb "$ORIGIN_PID") kB"
  # shellcheck disable=SC2086
  "$BIN/holoquic-load" --origin "127.0.0.1:$PORT" --sessions "$sessions" --duration "$SECONDS_EACH" --quality "$QUALITY" \
    --origin-pid "$ORIGIN_PID" --interval 5 --json $EXTRA >"$OUT/flood-sessions.json" 2>"$OUT/flood-sessions.progress" &
  local load=$!
  python3 - "$PORT" "$SECONDS_EACH" <<'EOF' &
import os, socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
junk = [bytes([0x40]) + os.urandom(1199), bytes([0xc3, 0, 0, 0, 1, 8]) + os.urandom(1194)]  # short- and long-header shaped
end, sent = time.time() + seconds, 0
while time.time() < end:
    for _ in range(1000):
        try:
            s.sendto(junk[sent & 1], ("127.0.0.1", port)); sent += 1
        except OSError:
            pass
print(f"flood: {sent} datagrams in {seconds:.0f} s ({sent / seconds:.0f}/s)", flush=True)
EOF
  local flood=$!
  for t in $(seq 5 5 "$SECONDS_EACH"); do sleep 5; echo "t=${t}s origin RSS $(rss_kb "$ORIGIN_PID") kB"; done
  wait "$flood"
  wait "$load" || true
  echo "origin RSS after: $(rss_kb "$ORIGIN_PID") kB"
  echo "the $sessions sessions meanwhile:"
  summarize "$OUT/flood-sessions.json"
  stop_origin
}

case "${1:-sessions}" in
  sessions) shift || true; run_sessions "$@" ;;
  flood) run_flood ;;
  *) echo "usage: $0 sessions [N…] | flood" >&2; exit 2 ;;
esac
