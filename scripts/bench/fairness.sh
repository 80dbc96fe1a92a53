#!/usr/bin/env bash
# Fairness benchmark (docs/benchmarks.md → "Sharing a bottleneck with CUBIC TCP"): the origin's
# QUIC flow to headless Chromium shares one bottleneck with one CUBIC TCP download, no random
# loss. Run as root (network namespaces, tc, iptables):
#
#   scripts/bench/fairness.sh [--runs 5] [--paths datagram,reliable] [--rate-mbit 20] [--delay-ms 20]
#       [--buffer-bdp 1.5] [--alone-s 8] [--both-s 30] [--out DIR]
#       [--config NAME="ORIGIN FLAGS" ...] [--origin BIN] [--web DIR]
#
# Per run, fresh: two namespaces (scripts/net/topology.sh; names carry this script's pid), the
# origin in A, the page server and Chromium in B; a tbf on A's egress (origin → client) at the rate
# with a drop-tail queue of --buffer-bdp × rate × RTT bytes; the one-way delay both ways by
# `holoquic-impair nfqueue` (no loss). Chromium fetches 5 MB objects back to back over QUIC
# (datagrams with FEC planned for 5 % loss, or a reliable stream) for --alone-s, then curl
# receives a TCP bulk transfer from a sender in A (kernel CUBIC) for --both-s while the QUIC
# flow goes on. scripts/bench/fairness.ts measures (bytes per flow at the client, the
# bottleneck's queue, the origin's qlog) and `fairness.ts summary` prints the table.
# Each --config is one origin setting (default: `default` = no flags, `quiche-loss` =
# "--loss-tolerance 0"); configs × paths × runs are interleaved run by run.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
source "$here/../net/topology.sh"
[ "$(id -u)" -eq 0 ] || die "the fairness benchmark needs root (network namespaces, tc, iptables)"

runs=5 paths=datagram,reliable rate=20 delay=20 buffer_bdp=1.5 alone=8 both=30
out="$ROOT/results/fairness-$(date -u +%Y%m%dT%H%M%SZ)"
origin_bin="$ROOT/server/target/release/holoquic-origin" web="${HOLOQUIC_DIST:-$ROOT/dist}"
impair_bin="$ROOT/server/target/release/holoquic-impair"
configs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2 ;; --paths) paths=$2 ;; --rate-mbit) rate=$2 ;; --delay-ms) delay=$2 ;;
        --buffer-bdp) buffer_bdp=$2 ;; --alone-s) alone=$2 ;; --both-s) both=$2 ;; --out) out=$2 ;;
        --config) configs+=("$2") ;; --origin) origin_bin=$2 ;; --web) web=$2 ;;
        *) die "unknown option $1 (see the comment at the top of $0)" ;;
    esac
    shift 2
done
[ ${#configs[@]} -gt 0 ] || configs=("default=" "quiche-loss=--loss-tolerance 0")
for f in "$origin_bin" "$impair_bin" "$web/e2e/pages/transport.html"; do [ -e "$f" ] || die "$f is missing: build first (scripts/setup.sh)"; done

# The bottleneck queue in bytes: --buffer-bdp × rate × RTT (RTT = twice the one-way delay).
queue_bytes=$(awk -v r="$rate" -v d="$delay" -v b="$buffer_bdp" 'BEGIN { printf "%d", b * r * 1e6 / 8 * 2 * d / 1000 }')
mkdir -p "$out"
content=$(mktemp -d)
mkdir -p "$content/bench"
head -c 5000000 /dev/urandom > "$content/bench/object.bin"

# Sends zeros to every client until it hangs up, with the kernel's CUBIC (the TCP flow to share with).
tcp_sender='
import socket, sys, threading
server = socket.create_server((sys.argv[1], int(sys.argv[2])))
def send(conn):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
    chunk = bytes(65536)
    try:
        while True: conn.sendall(chunk)
    except OSError: pass
while True:
    conn, _ = server.accept()
    threading.Thread(target=send, args=(conn,), daemon=True).start()
'

pids=()
stop_processes() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}
cleanup() {
    trap '' INT TERM
    stop_processes
    hq_net_down
    rm -rf "$content"
}
trap cleanup EXIT
trap 'exit 130' INT TERM


# one_run NAME FLAGS VIA RUN_DIR
one_run() {
    local name=$1 flags=$2 via=$3 dir=$4
    mkdir -p "$dir/qlog"
    hq_net_up
    # The TCP competitor: a bulk sender in the origin's namespace that picks CUBIC for its socket
    # (TCP_CONGESTION, allowed to root); a namespace's default can only be one of the host's
    # net.ipv4.tcp_allowed_congestion_control, which need not include cubic.
    ip netns exec "$HQ_NS_A" python3 -c "$tcp_sender" "$HQ_ADDR_A" 5201 & pids+=($!)
    hq_net_wait_listening "$HQ_NS_A" tcp 5201 "${pids[-1]}"
    # shellcheck disable=SC2086
    ip netns exec "$HQ_NS_A" "$origin_bin" --listen "$HQ_ADDR_A:4433" --content "$content" --qlog-dir "$dir/qlog" \
        --cors --allow-origin http://127.0.0.1:8080 $flags > "$dir/origin.log" 2>&1 & pids+=($!)
    wait_origin_ready "$dir/origin.log"
    ip netns exec "$HQ_NS_B" "$origin_bin" --listen 127.0.0.1:9443 --http-listen 127.0.0.1:8080 \
        --content "$content" --web "$web" > "$dir/page.log" 2>&1 & pids+=($!)
    wait_origin_ready "$dir/page.log"
    HQ_IMPAIR_OUT="$dir/impair"
    hq_net_impair_hosts "$impair_bin" --delay-ms "$delay" --seed 1
    # The bottleneck: origin → client, a drop-tail queue of queue_bytes (peakrate/mtu as in
    # hq_net_rate: GSO and TSO super-packets are cut into wire packets). ACKs are not shaped.
    ip netns exec "$HQ_NS_A" tc qdisc add dev hqveth-a root tbf rate "${rate}mbit" burst 16384 \
        limit "$queue_bytes" peakrate 10gbit mtu 2000
    # Per-protocol byte counters where the client receives (before the delay queue).
    ip netns exec "$HQ_NS_B" iptables-legacy -t mangle -A PREROUTING -s "$HQ_ADDR_A" -p udp
    ip netns exec "$HQ_NS_B" iptables-legacy -t mangle -A PREROUTING -s "$HQ_ADDR_A" -p tcp
    ip netns exec "$HQ_NS_B" "$ROOT/node_modules/.bin/tsx" "$here/fairness.ts" run \
        --ns-a "$HQ_NS_A" --ns-b "$HQ_NS_B" --origin "$HQ_ADDR_A:4433" --page http://127.0.0.1:8080 \
        --via "$via" --tcp "$HQ_ADDR_A:5201" --rate-mbit "$rate" --alone-s "$alone" --both-s "$both" --qlog-dir "$dir/qlog" \
        --label "$name" --out "$dir/result.json" > "$dir/client.log" 2>&1 || log "run failed: $dir/client.log"
    stop_processes
    hq_net_down
}

log "fairness: ${rate} Mbit/s, ${delay} ms each way, queue ${queue_bytes} B (${buffer_bdp} BDP), ${alone} s alone + ${both} s shared; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((run = 1; run <= runs; run++)); do
    for config in "${configs[@]}"; do
        for via in ${paths//,/ }; do
            dir="$out/${config%%=*}-$via-$run"
            log "run $run: ${config%%=*} $via"
            one_run "${config%%=*}" "${config#*=}" "$via" "$dir"
        done
    done
done
"$ROOT/node_modules/.bin/tsx" "$here/fairness.ts" summary "$out"/*/result.json | tee "$out/summary.md"
