#!/usr/bin/env python3
"""glTF as web exporters write it, packed for real: make-gltf-variants turns the shared
CesiumMan.glb (skinned, textured, animated) into a Draco-compressed, a meshopt-compressed and a
KHR_texture_transform variant, and gltfpack (an exporter, Debian's package) writes what it
writes for the web with -cc: KHR_mesh_quantization, meshopt with its octahedral, quaternion and
exponential filters, a texture transform dequantizing the UVs. One scene file packs the original
and the four (one high-quality rung, 10 frames); vpcc-decode decodes each object's segment back, and each variant's frames must
match the original's:

- point count within 3 %, bounding box within 1 voxel on each side (gltfpack's: 3);
- at least 99 % of the original's points have a variant point at most 1 voxel away (in each
  axis), and the mean absolute colour difference to it is at most 6 levels (of 255) per channel,
  8 for gltfpack's (neighbouring texels differ by about that much; a texture read wrongly
  differs by tens).

(Draco's 16-bit and gltfpack's 14-bit position quantisation and meshopt's exponential filter
(18 mantissa bits) move a few surface samples across voxel borders, and the encoder's patches then differ a little; the
texture transform gives back the very same UVs. A variant whose extension was ignored decodes to
no geometry or to the decoy's flat colours.) A variant requiring an unsupported extension is refused, exit 3,
naming the file and the extension.

    check_gltf_extensions.py BUILD_DIR SHARED_DIR        (exit 77: the shared model is absent)"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import float_ply  # noqa: E402

BITS = 8
FRAMES = 10
VARIANTS = ["draco", "meshopt", "transform", "gltfpack"]
from checking import expect, failures  # noqa: E402


def run(command, quiet=False):
    result = subprocess.run(command, capture_output=True, text=True)
    print("$ " + " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(command)))
    print(result.stderr.strip() if quiet else (result.stdout + result.stderr).strip())
    return result


def nearest(point, colours):
    """The colour of the variant point at `point`, else of one at most 1 voxel away, else None."""
    if point in colours:
        return colours[point]
    x, y, z = point
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dz in (-1, 0, 1):
                found = colours.get((x + dx, y + dy, z + dz))
                if found is not None:
                    return found
    return None


def compare(name, frame, source, variant):
    """Checks one decoded frame of a variant against the original's."""
    where = f"{name} frame {frame}"
    # gltfpack is lossy by design (14-bit positions, 12-bit rotations, animation resampled at
    # 30 Hz): the posed figure may differ by a voxel or two.
    box_voxels, colour_levels = (3, 8) if name == "gltfpack" else (1, 6)
    expect(abs(len(variant) - len(source)) <= 0.03 * len(source), f"{where}: {len(variant)} points, original {len(source)}")
    if not variant:
        return
    for axis in range(3):
        lo_s, hi_s = min(p[axis] for p in source), max(p[axis] for p in source)
        lo_v, hi_v = min(p[axis] for p in variant), max(p[axis] for p in variant)
        expect(abs(lo_s - lo_v) <= box_voxels and abs(hi_s - hi_v) <= box_voxels, f"{where}: axis {axis} spans {lo_v}–{hi_v}, original {lo_s}–{hi_s}")
    colours = {p[:3]: p[3:] for p in variant}
    pairs = [(p[3:], c) for p in source for c in [nearest(p[:3], colours)] if c is not None]
    expect(len(pairs) >= 0.99 * len(source), f"{where}: {100 * len(pairs) / len(source):.2f} % of the original's points within 1 voxel")
    for channel, label in enumerate("RGB"):
        diff = sum(abs(a[channel] - b[channel]) for a, b in pairs) / max(1, len(pairs))
        expect(diff <= colour_levels, f"{where}: mean |Δ{label}| {diff:.2f} to the nearest point")


def main(build, shared):
    model = os.path.join(shared, "data", "models", "CesiumMan.glb")
    if not os.path.exists(model):
        print("skipped: no shared CesiumMan.glb")
        return 77
    work = tempfile.mkdtemp(prefix="holoquic-check-gltf-")
    try:
        made = run([os.path.join(build, "make-gltf-variants"), model, work])
        expect(made.returncode == 0, "make-gltf-variants wrote the variants")
        if made.returncode != 0:
            return 1
        gltfpack = shutil.which("gltfpack")
        expect(gltfpack is not None, "gltfpack is installed (Debian package gltfpack, scripts/apt-packages.txt)")
        if gltfpack is None:
            return 1
        packed_by_exporter = run([gltfpack, "-i", model, "-o", os.path.join(work, "gltfpack.glb"), "-cc"])
        expect(packed_by_exporter.returncode == 0, "gltfpack wrote its compressed model")
        shutil.copy(model, os.path.join(work, "source.glb"))
        scene = {
            "frameRate": FRAMES, "segmentSeconds": 1, "seconds": 1, "bits": BITS, "inter": False,
            "ladder": [{"lod": 1, "maps": 2, "geometryQp": 8, "attributeQp": 8}],
            "objects": [{"id": name, "gltf": name + ".glb"} for name in ["source"] + VARIANTS],
        }
        with open(os.path.join(work, "scene.json"), "w") as f:
            json.dump(scene, f)
        out = os.path.join(work, "content")
        packed = run([os.path.join(build, "holoquic-pack"), "scene", os.path.join(work, "scene.json"), "--out", out, "--threads", "2"])
        expect(packed.returncode == 0, f"holoquic-pack packed the original and the variants (exit {packed.returncode})")
        if packed.returncode != 0:
            return 1
        decoded = {}
        for name in ["source"] + VARIANTS:
            pattern = os.path.join(work, name + "_%02d.ply")
            result = run([os.path.join(build, "vpcc-decode"), os.path.join(out, name, "0", "seg-00000.v3c"), "--ply", pattern], quiet=True)
            expect(result.returncode == 0, f"{name}: decoded back")
            decoded[name] = [float_ply.read_ascii_ply(pattern % f) for f in (0, FRAMES // 2)]
        for name in VARIANTS:
            for index, frame in enumerate((0, FRAMES // 2)):
                compare(name, frame, decoded["source"][index], decoded[name][index])

        required = os.path.join(work, "required.glb")
        refused = run([os.path.join(build, "holoquic-pack"), "gltf", "--out", os.path.join(work, "refused"), "--object", "x=" + required])
        expect(refused.returncode == 3, f"a model requiring EXT_mesh_gpu_instancing is refused with exit 3 (got {refused.returncode})")
        expect("required.glb" in refused.stderr and "EXT_mesh_gpu_instancing" in refused.stderr, "the refusal names the file and the extension")
        expect(not os.path.exists(os.path.join(work, "refused")), "no content directory left behind")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
