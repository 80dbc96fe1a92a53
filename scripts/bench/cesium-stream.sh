#!/usr/bin/env bash
# The one-decoder benchmark's stream (docs/benchmarks.md → "One decoder, 2026-11-27" and "One
# decoder in Chromium"): CesiumMan (../shared/data/models/CesiumMan.glb, CC BY 4.0, never
# committed) sampled at 10 bits, 8 frames, every coordinate scaled by 0.55 and rounded with the
# duplicates dropped (≈ 260 k points per frame), encoded by our encoder as Rec1 with the grid
# geometry smoothing SEI (AVC, one map): ≈ 195–201 k decoded points and 7–8 k smoothed points per
# frame, like TMC2's 213 k-point CesiumMan CTC stream.
#
#   scripts/bench/cesium-stream.sh OUT.v3c
#
# Environment: TOOLS (default wasm/build-native: holoquic-pack and vpcc-encode), MODEL.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
TOOLS="${TOOLS:-$ROOT/wasm/build-native}"
MODEL="${MODEL:-$ROOT/../shared/data/models/CesiumMan.glb}"
OUT="${1:?usage: cesium-stream.sh OUT.v3c}"
require_tools "$TOOLS" holoquic-pack vpcc-encode
[ -f "$MODEL" ] || die "missing $MODEL"
work="$(mktemp -d "${TMPDIR:-/tmp}/holoquic-cesium.XXXXXX")"
trap 'rm -rf "$work"' EXIT

"$TOOLS/holoquic-pack" sample --out "$work/sampled" --object cesium="$MODEL" --seconds 1 --frame-rate 8 --bits 10
# Scaled by 0.55: binary little-endian PLY of int16 x, y, z and uint8 r, g, b, as the sampler writes.
python3 - "$work/sampled/cesium" "$work/scaled" 0.55 <<'PY'
import os, struct, sys
source, target, factor = sys.argv[1], sys.argv[2], float(sys.argv[3])
os.makedirs(target)
record = struct.Struct('<hhhBBB')
for name in sorted(os.listdir(source)):
    data = open(os.path.join(source, name), 'rb').read()
    body = data.index(b'end_header\n') + len(b'end_header\n')
    kept, seen, before = bytearray(), set(), 0
    for x, y, z, r, g, b in record.iter_unpack(data[body:]):
        before += 1
        voxel = (round(x * factor), round(y * factor), round(z * factor))
        if voxel not in seen:  # the first point of a voxel keeps it
            seen.add(voxel)
            kept += record.pack(*voxel, r, g, b)
    header = data[:body].replace(b'element vertex %d' % before, b'element vertex %d' % len(seen))
    open(os.path.join(target, name), 'wb').write(header + bytes(kept))
PY
"$TOOLS/vpcc-encode" -o "$OUT" --codec avc --smoothing --maps 1 --bits 10 "$work"/scaled/frame-*.ply
