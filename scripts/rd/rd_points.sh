#!/usr/bin/env bash
# Rate-distortion points of our encoder (docs/benchmarks.md, "Encoder rate-distortion"): the
# first FRAMES frames of each shared 10-bit sequence encoded at each QP pair with CODEC (hevc,
# TMC2's codec and the default here, or avc, the player's and the packager's default), decoded
# by our decoder (vpcc-decode, post-processing included), and measured with vpcc-quality against
# the source frames. Prints one tab-separated row per point:
#   sequence  qp_geo  qp_attr  kbit_per_s(30 fps)  d1_psnr  d2_psnr  y_psnr  u_psnr  v_psnr  decoded_points  encode_ms_per_frame
#
#   scripts/rd/rd_points.sh BUILD_DIR OUT_DIR [extra vpcc-encode options...]
# e.g. scripts/rd/rd_points.sh wasm/build-native /tmp/rd > baseline.tsv
# FRAMES, QPS ("geo/attr ...") and SEQS ("cesiumman fox") narrow a sweep while iterating;
# CODEC=avc measures the AVC curve at the same pairs (each codec with vpcc-encode's preset for it).
# The default QP pairs are the encoder's rate allocation per condition (docs/benchmarks.md,
# "Rate allocation"): one GOP (random access) codes geometry 3 QP finer than all-intra does.
set -euo pipefail
build=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
shared=${HOLOQUIC_SHARED:-$here/../../../shared}
frames=${FRAMES:-8}
default_qps="8/22 14/30 19/36 24/42 29/47"
for option in "$@"; do
  [[ $option == --all-intra ]] && default_qps="11/22 17/30 22/36 27/42 32/47"
done
qps=${QPS:-$default_qps}
seqs=${SEQS:-"cesiumman fox"}
codec=${CODEC:-hevc}
[[ $codec == hevc || $codec == avc ]] || { echo "CODEC must be hevc or avc, not '$codec'" >&2; exit 2; }
mkdir -p "$out"
for seq in $seqs; do
  src="$shared/data/pointclouds/$seq/${seq}_vox10_%04d.ply"
  inputs=()
  for ((f = 0; f < frames; f++)); do inputs+=("$(printf "$src" "$f")"); done
  for qp in $qps; do
    geo=${qp%/*} attr=${qp#*/}
    dir="$out/$seq-$geo-$attr"
    rm -rf "$dir" && mkdir -p "$dir"
    "$build/vpcc-encode" -o "$dir/s.v3c" --codec "$codec" --qp-geo "$geo" --qp-attr "$attr" --threads 1 "$@" "${inputs[@]}" >"$dir/encode.log"
    "$build/vpcc-decode" "$dir/s.v3c" --ply "$dir/dec_%04d.ply" >"$dir/decode.log"
    "$build/vpcc-quality" "$src" "$dir/dec_%04d.ply" --frames "$frames" --json >"$dir/quality.json"
    python3 - "$dir" "$seq" "$geo" "$attr" "$frames" <<'PY'
import json, os, re, sys
d, seq, geo, attr, frames = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
q = json.load(open(os.path.join(d, "quality.json")))
a = q["average"]
kbps = os.path.getsize(os.path.join(d, "s.v3c")) * 8 * 30 / frames / 1000
ms = float(re.search(r"^time (\d+) ms", open(os.path.join(d, "encode.log")).read(), re.M).group(1)) / frames
points = sum(f["decodedPoints"] for f in q["frames"]) / len(q["frames"])
fmt = lambda v: "inf" if v is None else f"{v:.3f}"
print("\t".join([seq, geo, attr, f"{kbps:.1f}"] + [fmt(a[k]) for k in ("d1Psnr", "d2Psnr", "yPsnr", "uPsnr", "vPsnr")] + [f"{points:.0f}", f"{ms:.0f}"]))
PY
  done
done
