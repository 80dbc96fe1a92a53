#!/usr/bin/env bash
# Origin benchmarks on loopback (docs/benchmarks.md → "Origin under load"), not part of CI:
#
#   scripts/bench/origin-load.sh sessions [N…]   N concurrent WebTransport sessions of the demo
#                                               scene each (default 10 100 300), one run per N
#   scripts/bench/origin-load.sh flood          the origin's RSS while junk UDP datagrams flood it
#
# Environment: CONTENT (a content root holding demo/, default the packed e2e scene),
# SECONDS_EACH (60), QUALITY (rung index or top; default top), PORT (14433), OUT (a directory
# for the JSON reports, default a fresh one under the temporary directory), ORIGIN (the origin
# binary, default the release build's; another commit's build to compare), EXTRA (more
# holoquic-load options, e.g. "--reliable-fraction 1"), PAUSES (seconds into each sessions run
# at which the origin is stopped, SIGSTOP, for PAUSE_SECONDS (default 3) and then resumed: a
# deliberate overload, objects queue meanwhile; e.g. PAUSES="150 390"), NICE (run the origin and
# the load client at this niceness, e.g. -10 as root so other work on the machine disturbs less).
# With the kernel's autogroup scheduling on (/proc/sys/kernel/sched_autogroup_enabled), a
# niceness counts only against processes of the same session, so each of the two runs in a
# session of its own whose autogroup gets the niceness too.
#
# Each sessions run leaves sessions-N.json (the report) and sessions-N.csv: every 10 s the
# objects so far and their outcomes, latency and throughput since the last row, the origin's RSS
# and the load average — the memory over time that "flat over 30 minutes" is read from.
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
ORIGIN="${ORIGIN:-$BIN/holoquic-origin}"
EXTRA="${EXTRA:-}"
PAUSES="${PAUSES:-}"
PAUSE_SECONDS="${PAUSE_SECONDS:-3}"
NICE="${NICE:-0}"
mkdir -p "$OUT"

[ -x "$ORIGIN" ] && [ -x "$BIN/holoquic-load" ] || { echo "build first: (cd server && cargo build --release)" >&2; exit 1; }
[ -f "$CONTENT/demo/manifest.mpd" ] || { echo "no demo scene under $CONTENT (CONTENT=… or pack one: holoquic-pack demo --out DIR/demo)" >&2; exit 1; }

ORIGIN_PID=""
# The origin and the load client run in new sessions at niceness $NICE (see NICE above); `boost
# PID` gives such a session's autogroup the same niceness once the process leads it.
# (setsid and nice exec the command: $! stays its process id.)
NICED=()
[ "$NICE" = 0 ] || NICED=(setsid nice -n "$NICE")
boost() {
  [ "$NICE" = 0 ] && return
  for _ in $(seq 100); do [ "$(ps -o sid= -p "$1" | tr -d ' ')" = "$1" ] && break; sleep 0.01; done
  [ -w "/proc/$1/autogroup" ] && echo "$NICE" >"/proc/$1/autogroup" 2>/dev/null || true
}
start_origin() {
  "${NICED[@]}" "$ORIGIN" --listen "127.0.0.1:$PORT" --content "$CONTENT" --access-log-format off \
    --max-connections 4096 --max-connections-per-ip 4096 --max-handshakes-per-ip 1024 \
    >"$OUT/origin.out" 2>"$OUT/origin.err" &
  ORIGIN_PID=$!
  boost "$ORIGIN_PID"
  for _ in $(seq 100); do grep -q listening "$OUT/origin.out" 2>/dev/null && return; sleep 0.1; done
  echo "the origin did not start:" >&2; cat "$OUT/origin.err" >&2; exit 1
}
stop_origin() { [ -n "$ORIGIN_PID" ] && kill "$ORIGIN_PID" 2>/dev/null && wait "$ORIGIN_PID" 2>/dev/null; ORIGIN_PID=""; }
trap stop_origin EXIT
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }

# Stops the origin (SIGSTOP) at each of the given seconds since the call for PAUSE_SECONDS, then
# lets it go on: while it is stopped the load client's requests pile up, and it comes back to a
# backlog of objects, as after the machine was busy.
pause_origin_at() {
  local begun=$SECONDS
  for at in "$@"; do
    local wait=$((at - (SECONDS - begun)))
    [ "$wait" -gt 0 ] && sleep "$wait"
    echo "t=${at}s: origin stopped for ${PAUSE_SECONDS} s, RSS $(rss_kb "$ORIGIN_PID") kB" >>"$OUT/pauses.log"
    kill -STOP "$ORIGIN_PID" || return 0
    sleep "$PAUSE_SECONDS"
    kill -CONT "$ORIGIN_PID" || return 0
  done
}

run_sessions() {
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  local counts=("$@")
  [ ${#counts[@]} -gt 0 ] || counts=(10 100 300)
  for n in "${counts[@]}"; do
    start_origin
    local cpu0; cpu0=$(cpu_s "$ORIGIN_PID")
    # shellcheck disable=SC2086
    "${NICED[@]}" /usr/bin/time -f "%U %S" -o "$OUT/sessions-$n.time" \
      "$BIN/holoquic-load" --origin "127.0.0.1:$PORT" --sessions "$n" --duration "$SECONDS_EACH" --quality "$QUALITY" \
      --ramp "$(awk -v n="$n" 'BEGIN { r = n / 50; print (r < 1 ? 1 : r) }')" --origin-pid "$ORIGIN_PID" --interval 10 \
      --csv "$OUT/sessions-$n.csv" --json $EXTRA >"$OUT/sessions-$n.json" 2>"$OUT/sessions-$n.progress" &
    local load=$!
    boost "$load"
    # shellcheck disable=SC2086
    pause_origin_at $PAUSES
    wait "$load" || true
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
