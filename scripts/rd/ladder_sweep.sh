#!/usr/bin/env bash
# The packager's quality ladder measured as a grid (docs/benchmarks.md, "The quality ladder
# re-derived"): every candidate rung (level of detail, maps, geometry QP, attribute QP) packed by
# holoquic-pack itself for 1 s of three objects — demo figure 0 (the demo's 9-bit grid), the
# CesiumMan glTF model sampled at 9 bits (at 10 bits its ~700 k points a frame would make the
# sweep take hours), and the shared 10-bit Fox sequence as PLY frames — and
# read back from the packer's report.json (its quality: frames 0 and 15 of the segment, decoded
# back, MPEG pc_error's definitions). Prints one tab-separated row per object and candidate:
#   object  codec  lod  maps  qp_geo  qp_attr  kbit_per_s  d1_psnr  y_psnr  points_per_frame
#
#   scripts/rd/ladder_sweep.sh BUILD_DIR OUT_DIR > grid.tsv
# CODEC (avc, hevc) and GRID ("lod/maps/geo/attr ...") narrow or change the sweep;
# scripts/rd/ladder_hull.py then picks the rungs from the rows.
set -euo pipefail
build=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
shared=$(cd "${HOLOQUIC_SHARED:-$here/../../../shared}" && pwd)
codec=${CODEC:-avc}
# Each structure over the QP range where it can be on the hull; the attribute QP 6 and 10 above
# the geometry's (the old ladder used 6 to 10).
default_grid=""
for g in 28 34 40; do default_grid+=" 2/1/$g/$((g + 6)) 2/1/$g/$((g + 10))"; done
for g in 16 22 28 34; do default_grid+=" 1/1/$g/$((g + 6)) 1/1/$g/$((g + 10))"; done
for g in 8 14 20 26; do default_grid+=" 1/2/$g/$((g + 6)) 1/2/$g/$((g + 10))"; done
default_grid+=" 2/1/36/46 2/1/30/38 1/2/14/22"  # the hand-set ladder's rungs the grid lacks
grid=(${GRID:-$default_grid})
mkdir -p "$out"
# holoquic-pack takes at most 10 rungs a scene: one scene file per 10 candidates.
for ((start = 0; start < ${#grid[@]}; start += 10)); do
  chunk=("${grid[@]:start:10}")
  scene="$out/sweep-$codec-$start"
  rm -rf "$scene" && mkdir -p "$scene"
  python3 - "$scene/scene.json" "$codec" "$shared" "${chunk[@]}" <<'PY'
import json, sys
path, codec, shared, cells = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ladder = []
for c in cells:
    lod, maps, geo, attr = (int(v) for v in c.split("/"))
    ladder.append({"lod": lod, "maps": maps, "geometryQp": geo, "attributeQp": attr})
scene = {
    "seconds": 1, "codec": codec, "ladder": ladder,
    "objects": [
        {"id": "figure", "demo": {"seed": 0}},
        {"id": "cesiumman", "gltf": f"{shared}/data/models/CesiumMan.glb", "bits": 9},
        {"id": "fox", "ply": f"{shared}/data/pointclouds/fox/fox_vox10_%04d.ply", "bits": 10},
    ],
}
json.dump(scene, open(path, "w"), indent=1)
PY
  "$build/holoquic-pack" scene "$scene/scene.json" --out "$scene/content" --threads 2 >"$scene/pack.log" 2>&1
  python3 - "$scene/content/report.json" "$codec" "${chunk[@]}" <<'PY'
import json, sys
report, codec, cells = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3:]
fmt = lambda v: "inf" if v is None else f"{v:.2f}"
for o in report["objects"]:
    for q in o["qualities"]:
        lod, maps, geo, attr = cells[q["quality"]].split("/")
        print("\t".join([o["id"], codec, lod, maps, geo, attr, f"{q['avgKbps']:.1f}", fmt(q["d1Psnr"]), fmt(q["yPsnr"]), f"{q['pointsPerFrame']:.0f}"]))
PY
done
