#!/usr/bin/env bash
# One QoE run (docs/qoe.md → "Experiment runner"): two namespaces, the origin on one side, headless
# Chromium on the other, every packet between them impaired (GE loss + delay) and rate-shaped by a
# bandwidth trace. Called by scripts/qoe/run.ts with its parameters in the environment; everything
# is torn down on exit, failure or interrupt.
#
# Inputs (env): RUN_DIR ORIGIN_BIN IMPAIR_BIN CONTENT_DIR WEB_DIR PAGE_QUERY GE GE_BAD_MS DELAY_MS SEED LOSS_DIRECTION
#               TRACE_FILE TRACE_SCALE POSE_FILE TIMEOUT_S [ORIGIN_CC: the origin's congestion control]
#               [ORIGIN_QLOG=1: the origin writes a qlog per connection into RUN_DIR/qlog]
#               [QUEUE_MS: the bottleneck's queue in ms at its current rate, default 100]
# Outputs in RUN_DIR: qoe.json (client result), impair.a (client→origin counters),
#                     impair.b (origin→client counters), qdisc.a (the origin-side bottleneck
#                     queue: `tc -s qdisc`), metrics.a (the origin's /metrics at the end, from its admin
#                     listener in its namespace),
#                     snmp.b (the client namespace's /proc/net/snmp: UDP receive-buffer drops),
#                     tcp.a (the origin namespace's /proc/net/snmp + netstat: TCP retransmissions),
#                     origin.log, page.log, client.log
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
source "$here/../net/topology.sh"

: "${RUN_DIR:?}" "${ORIGIN_BIN:?}" "${IMPAIR_BIN:?}" "${CONTENT_DIR:?}" "${WEB_DIR:?}" "${PAGE_QUERY:?}"
: "${DELAY_MS:=10}" "${SEED:=1}" "${TRACE_FILE:?}" "${TRACE_SCALE:?}" "${POSE_FILE:?}" "${TIMEOUT_S:?}"
[ "$(id -u)" -eq 0 ] || die "QoE runs need root (network namespaces, tc, iptables)"

HQ_IMPAIR_OUT="$RUN_DIR/impair"
pids=()
cleanup() {
    local pid
    # A second signal (Ctrl-C pressed twice, a runner passing one on) must not cut the teardown short.
    trap '' INT TERM
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    hq_net_down
}
trap cleanup EXIT
trap 'exit 130' INT TERM


hq_net_up
# The bottleneck's queue (topology.sh's default when not given).
[ -n "${QUEUE_MS:-}" ] && HQ_QUEUE_MS=$QUEUE_MS

# The origin and its content, on the origin side.
ip netns exec "$HQ_NS_A" "$ORIGIN_BIN" --listen "$HQ_ADDR_A:4433" --admin-listen 127.0.0.1:9090 --content "$CONTENT_DIR" \
    ${ORIGIN_CC:+--cc "$ORIGIN_CC"} ${ORIGIN_QLOG:+--qlog-dir "$RUN_DIR/qlog"} --cors --allow-origin http://127.0.0.1:8080 > "$RUN_DIR/origin.log" 2>&1 & pids+=($!)
wait_origin_ready "$RUN_DIR/origin.log"

# The page (built app + pose trace) from 127.0.0.1 on the client side: a secure context.
mkdir -p "$RUN_DIR/page-content"
cp "$POSE_FILE" "$RUN_DIR/page-content/pose.csv"
ip netns exec "$HQ_NS_B" "$ORIGIN_BIN" --listen 127.0.0.1:9443 --http-listen 127.0.0.1:8080 \
    --content "$RUN_DIR/page-content" --web "$WEB_DIR" > "$RUN_DIR/page.log" 2>&1 & pids+=($!)
wait_origin_ready "$RUN_DIR/page.log"

# Impairment of every packet between the namespaces (TCP for HTTP/2 and UDP for QUIC alike):
# the one-way delay both ways; the loss origin -> client only (LOSS_DIRECTION=down, as netem on
# the server's interface), or both ways.
common="--delay-ms $DELAY_MS --seed $SEED"
lossy="$common"
# GE_BAD_MS: the chain on a clock, Bad periods of that many ms (holoquic-impair --ge-bad-ms).
[ -n "${GE:-}" ] && lossy="--ge $GE ${GE_BAD_MS:+--ge-bad-ms $GE_BAD_MS }$common"
case "${LOSS_DIRECTION:-down}" in
    down) hq_net_impair_hosts_split "$IMPAIR_BIN" "$common" "$lossy" ;;
    both) hq_net_impair_hosts_split "$IMPAIR_BIN" "$lossy" "$lossy" ;;
    *) die "LOSS_DIRECTION must be down or both, got $LOSS_DIRECTION" ;;
esac

# Rate: the trace's first step now, then one step per second in the background from the moment the
# page has loaded (client.ts writes $RUN_DIR/started): Chromium's start takes 1-3 s and varies,
# and with the trace started before it two runs met the trace's troughs up to a second apart in
# their playback, which made paired runs of two modes differ by where the troughs fell.
first=$(awk -F, 'NR > 1 && $1 !~ /^#/ { print $2; exit }' "$TRACE_FILE")
hq_net_rate "$(awk -v r="$first" -v s="$TRACE_SCALE" 'BEGIN { printf "%.3f", r * s }')"
(
    for _ in $(seq 1 600); do [ -e "$RUN_DIR/started" ] && break; sleep 0.1; done
    hq_net_replay "$TRACE_FILE" "$TRACE_SCALE"
) & pids+=($!)

spki_url="$HQ_ADDR_A:4433"
# In the background and waited for: a signal then interrupts the wait at once and the traps tear
# everything down (bash runs traps only after a foreground command has finished).
ip netns exec "$HQ_NS_B" "$ROOT/node_modules/.bin/tsx" "$here/client.ts" \
    --url "http://127.0.0.1:8080/?origin=https://$HQ_ADDR_A:4433&pose=/content/pose.csv&autoplay=1&$PAGE_QUERY" \
    --spki-from "$spki_url" --timeout "$TIMEOUT_S" --out "$RUN_DIR/qoe.json" --started "$RUN_DIR/started" > "$RUN_DIR/client.log" 2>&1 &
pids+=($!)
wait "$!" || true

# What the bottleneck queue dropped (congestion loss, which the impairer does not see: it sits
# behind the queue) and what the origin counted, before everything is torn down. The browser has
# closed its connection; the second lets the origin finish draining it, so its counters are in.
sleep 1
ip netns exec "$HQ_NS_A" tc -s qdisc show dev hqveth-a > "$RUN_DIR/qdisc.a" 2>&1 || true
ip netns exec "$HQ_NS_B" cat /proc/net/snmp > "$RUN_DIR/snmp.b" 2>&1 || true
ip netns exec "$HQ_NS_A" cat /proc/net/snmp /proc/net/netstat > "$RUN_DIR/tcp.a" 2>&1 || true
ip netns exec "$HQ_NS_A" curl -s --max-time 5 "http://127.0.0.1:9090/metrics" > "$RUN_DIR/metrics.a" 2>/dev/null || true

hq_net_impair_stop
