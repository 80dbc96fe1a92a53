#!/usr/bin/env bash
# Encoding at real scale (docs/benchmarks.md → "Encoding at 8i density"), not part of CI:
#  1. the top rung's encoding speed on one core: 30 frames of CesiumMan sampled at ~200 k points
#     (9 bits) and ~800 k points (10 bits), encoded by vpcc-encode with one thread; frames per
#     second per core = frames / CPU seconds (user + system: the machine may be busy);
#  2. a scene of four ~800 k-point objects from the shared glTF models (each of the two, CesiumMan
#     and the Fox, twice: the shared data has two models with one animation each) at 10 bits, 1 s at 30 fps, five rungs spanning ~20× in rate, packed with
#     holoquic-pack: CPU time per frame per core and each rung's rate and PSNR (report.json).
#
#   scripts/bench/pack-8i.sh [speed|scene|all]        (default all; needs ../shared/data/models)
#
# Environment: OUT (working directory, default a fresh one under the temporary directory),
# THREADS (packing threads, default 2), SECONDS_PACKED (scene length, default 1), BUILD (the
# build directory, default wasm/build-native), MODELS (the glTF models folder).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
BUILD="${BUILD:-$ROOT/wasm/build-native}"
MODELS="${MODELS:-$ROOT/../shared/data/models}"
require_tools "$BUILD" holoquic-pack vpcc-encode
[ -f "$MODELS/CesiumMan.glb" ] || die "no models at $MODELS (set MODELS)"
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/holoquic-pack-8i.XXXXXX")}"
mkdir -p "$OUT"
what="${1:-all}"
echo "commit $(git -C "$ROOT" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), in $OUT"

# The top rung of the scene below: LoD 1, two maps, QP 8/14.
TOP=(--lod 1 --maps 2 --qp-geo 8 --qp-attr 14)

if [ "$what" = speed ] || [ "$what" = all ]; then
  for bits in 9 10; do
    frames="$OUT/cesium-$bits"
    [ -d "$frames" ] || "$BUILD/holoquic-pack" sample --out "$frames" --object man="$MODELS/CesiumMan.glb" --seconds 1 --bits "$bits" >/dev/null
    /usr/bin/time -f "%U %S %e" -o "$OUT/time-$bits" "$BUILD/vpcc-encode" -o "$OUT/top-$bits.v3c" "${TOP[@]}" --threads 1 \
      "$frames"/man/frame-*.ply >"$OUT/encode-$bits.log" 2>&1
    read -r user sys wall <"$OUT/time-$bits"
    points=$(sed -n 's/.*points\/frame \([0-9]*\).*/\1/p' "$OUT/encode-$bits.log")
    rate=$(sed -n 's/.* \([0-9.]*\) Mbit\/s at.*/\1/p' "$OUT/encode-$bits.log")
    awk -v b="$bits" -v p="$points" -v u="$user" -v s="$sys" -v w="$wall" -v r="$rate" -v m="$(md5sum <"$OUT/top-$bits.v3c" | cut -c1-12)" \
      'BEGIN { printf "top rung, %d bits, %d points/frame: 30 frames in %.1f s CPU (%.1f user + %.1f sys, %.1f s wall): %.2f frames/s per core, %.3f s CPU per frame, %s Mbit/s, md5 %s\n", b, p, u + s, u, s, w, 30 / (u + s), (u + s) / 30, r, m }'
    grep "^time" "$OUT/encode-$bits.log"
  done
fi

if [ "$what" = scene ] || [ "$what" = all ]; then
  cat >"$OUT/scene-8i.json" <<JSON
{
  "seconds": ${SECONDS_PACKED:-1},
  "bits": 10,
  "ladder": [
    { "lod": 2, "maps": 1, "geometryQp": 40, "attributeQp": 51 },
    { "lod": 2, "maps": 1, "geometryQp": 30, "attributeQp": 40 },
    { "lod": 1, "maps": 1, "geometryQp": 30, "attributeQp": 38 },
    { "lod": 1, "maps": 2, "geometryQp": 22, "attributeQp": 30 },
    { "lod": 1, "maps": 2, "geometryQp": 8, "attributeQp": 14 }
  ],
  "objects": [
    { "id": "cesium-man-1", "gltf": "$MODELS/CesiumMan.glb" },
    { "id": "fox-1", "gltf": "$MODELS/Fox.glb" },
    { "id": "cesium-man-2", "gltf": "$MODELS/CesiumMan.glb" },
    { "id": "fox-2", "gltf": "$MODELS/Fox.glb" }
  ]
}
JSON
  rm -rf "$OUT/scene-8i"
  /usr/bin/time -f "%U %S %e" -o "$OUT/time-scene" "$BUILD/holoquic-pack" scene "$OUT/scene-8i.json" --out "$OUT/scene-8i" \
    --threads "${THREADS:-2}" >"$OUT/scene.log" 2>"$OUT/scene.err"
  cat "$OUT/scene.log"
  read -r user sys wall <"$OUT/time-scene"
  frames=$((4 * 30 * ${SECONDS_PACKED:-1}))
  awk -v u="$user" -v s="$sys" -v w="$wall" -v f="$frames" \
    'BEGIN { printf "scene: %d object-frames × 5 rungs in %.0f s CPU (%.0f s wall): %.2f s CPU per object-frame (all five rungs, sampling, decoding back and measuring included), %.3f s per rung-frame\n", f, u + s, w, (u + s) / f, (u + s) / f / 5 }'
fi
