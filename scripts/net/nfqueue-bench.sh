#!/usr/bin/env bash
# NFQUEUE throughput: UDP offered at MBIT from namespace A through
# `holoquic-impair nfqueue` (no impairment) in namespace B's INPUT chain.
#   scripts/net/nfqueue-bench.sh PATH/TO/holoquic-impair [MBIT] [SIZE]
# Prints sent/received Mbit/s and the impairer's CPU share. Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
impair=${1:?usage: nfqueue-bench.sh PATH/TO/holoquic-impair [MBIT] [SIZE]}
mbit=${2:-400}
size=${3:-1200}
# shellcheck source=topology.sh
. "$here/topology.sh"
work=$(mktemp -d)
nfq=""
cleanup() { [ -n "$nfq" ] && kill "$nfq" 2>/dev/null; hq_net_down; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
hq_net_up
ip netns exec "$HQ_NS_B" iptables-legacy -I INPUT -p udp --dport 6003 -j NFQUEUE --queue-num 3
ip netns exec "$HQ_NS_B" "$impair" nfqueue --queue 3 > "$work/nfq.json" & nfq=$!
ip netns exec "$HQ_NS_B" python3 "$here/traffic.py" udp-recv 6003 6 > "$work/recv.json" & receiver=$!
hq_net_wait_queue "$HQ_NS_B" 3 "$nfq"
hq_net_wait_listening "$HQ_NS_B" udp 6003 "$receiver"
ip netns exec "$HQ_NS_A" python3 "$here/traffic.py" udp-send "$HQ_ADDR_B" 6003 "$mbit" 5 "$size" > "$work/send.json"
wait "$receiver"
read -r utime stime < <(awk '{ print $14, $15 }' "/proc/$nfq/stat")
kill -TERM "$nfq"; wait "$nfq"; nfq=""
python3 - "$work" "$size" "$utime" "$stime" <<'PY'
import json, os, sys
work, size, utime, stime = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
sent = json.load(open(f"{work}/send.json"))["sent"]
recv = json.load(open(f"{work}/recv.json"))
print(json.dumps({"sent_mbit_s": round(sent * size * 8 / 5 / 1e6, 1),
                  "received_mbit_s": round(recv["bytes"] * 8 / 5 / 1e6, 1),
                  "received_per_second_mbit": recv["per_second_mbit"],
                  "impairer_cpu_percent_over_6_3_s": round(100 * (utime + stime) / os.sysconf("SC_CLK_TCK") / 6.3, 1),
                  "counters": json.load(open(f"{work}/nfq.json"))}))
PY
