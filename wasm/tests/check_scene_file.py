#!/usr/bin/env python3
"""A scene file with custom placement, 24 fps and 2-s segments packs into the matching MPD: the
timing (timescale, duration, frameRate, durations), a two-rung ladder, and each object's
hq:position, hq:rotation and hq:scale as docs/packaging.md defines them; the video sub-bitstreams
declare the scene's time base (24 pictures/s, 48 for two maps' interleaved pictures) — a demo figure turned
90° and enlarged, standing with its bottom centre on the given point, and a float-PLY box (fitted,
in millimetres) tilted by a quaternion, whose position the test computes from its own fit. A
segment decodes to 48 frames.

    check_scene_file.py BUILD_DIR"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_mpd  # noqa: E402
import float_ply  # noqa: E402
import video_timing  # noqa: E402

from checking import expect, failures  # noqa: E402


def close(a, b, tolerance=1e-5):
    return len(a) == len(b) and all(abs(x - y) <= tolerance * max(1.0, abs(y)) for x, y in zip(a, b))


def rotate(q, v):
    x, y, z, w = q
    u = (x, y, z)
    cross = lambda a, b: (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
    uv = cross(u, v)
    uuv = cross(u, uv)
    return tuple(v[i] + 2 * (w * uv[i] + uuv[i]) for i in range(3))


def main(build):
    work = tempfile.mkdtemp(prefix="holoquic-check-scene-")
    try:
        pattern, clouds = float_ply.write_sequence(os.path.join(work, "captures", "box"), 6, first=0)
        tilt = [0, 0, math.sin(math.radians(15)), math.cos(math.radians(15))]
        scene = {
            "frameRate": 24,
            "segmentSeconds": 2,
            "seconds": 2,
            "codec": "avc",
            "ladder": [
                {"lod": 2, "maps": 1, "geometryQp": 36, "attributeQp": 46},
                {"lod": 1, "maps": 2, "geometryQp": 28, "attributeQp": 34},
            ],
            "objects": [
                {"id": "dancer", "demo": {"seed": 1}, "position": [1.5, 0.25, -2], "rotation": 90, "size": 1.5},
                {"id": "box", "ply": "captures/box/frame_%04d.ply", "fit": True, "unit": 0.001, "bits": 8,
                 "position": [-1, 0, 0.5], "rotation": tilt},
            ],
        }
        path = os.path.join(work, "studio.json")
        with open(path, "w") as f:
            json.dump(scene, f, indent=2)
        out = os.path.join(work, "content", "studio")
        run = subprocess.run([os.path.join(build, "holoquic-pack"), "scene", path, "--out", out, "--threads", "2"],
                             capture_output=True, text=True)
        print(run.stdout + run.stderr)
        expect(run.returncode == 0, f"holoquic-pack scene exited {run.returncode}")
        if run.returncode != 0:
            return
        root = check_mpd.check(out, rungs=2)
        expect(root.get("mediaPresentationDuration") == "PT2S", f"mediaPresentationDuration {root.get('mediaPresentationDuration')}")
        expect(root.get("minBufferTime") == "PT2S", f"minBufferTime (one segment) {root.get('minBufferTime')}")
        sets = {s.get(check_mpd.HQ + "objectId"): s for s in root.findall("d:Period/d:AdaptationSet", check_mpd.NS)}
        expect(sorted(sets) == ["box", "dancer"], f"objects {sorted(sets)}")
        for oid, s in sets.items():
            template = s.find("d:SegmentTemplate", check_mpd.NS)
            expect(template.get("timescale") == "24" and template.get("duration") == "48",
                   f"{oid}: SegmentTemplate timescale {template.get('timescale')} duration {template.get('duration')} (24 fps, 2 s)")
            expect(s.get(check_mpd.HQ + "loopSegments") == "1", f"{oid}: one distinct segment")
            rates = [r.get("frameRate") for r in s.findall("d:Representation", check_mpd.NS)]
            expect(rates == ["24", "24"], f"{oid}: Representation frameRate {rates}")

        def numbers(s, name):
            return [float(v) for v in s.get(check_mpd.HQ + name).split()]

        dancer = sets["dancer"]
        yaw = [0, math.sin(math.radians(45)), 0, math.cos(math.radians(45))]
        expect(close(numbers(dancer, "rotation"), yaw), f"dancer: hq:rotation {numbers(dancer, 'rotation')} = 90° about y")
        expect(close(numbers(dancer, "scale"), [0.0055 * 1.5]), f"dancer: hq:scale {numbers(dancer, 'scale')} = 5.5 mm × 1.5")
        box = numbers(dancer, "bbox")
        footprint = [(box[0] + box[3]) / 2, box[1], (box[2] + box[5]) / 2]
        expect(close(footprint, [1.5, 0.25, -2], 1e-4), f"dancer: bottom centre of hq:bbox {footprint} stands on (1.5, 0.25, -2)")

        cube = sets["box"]
        origin, per_unit = float_ply.fit(clouds, 8)
        scale = 0.001 / per_unit
        expect(close(numbers(cube, "rotation"), tilt), f"box: hq:rotation {numbers(cube, 'rotation')} = the quaternion given")
        expect(close(numbers(cube, "scale"), [scale]), f"box: hq:scale {numbers(cube, 'scale')} = fitted {scale:.7g} m per voxel")
        # Voxel bounds of the fitted input over the frames used (ping-pong over the 6 frames), max exclusive.
        fitted = [float_ply.voxels(cloud, origin, per_unit) for cloud in clouds]
        lo = [min(v[c] for frame in fitted for v in frame) for c in range(3)]
        hi = [max(v[c] for frame in fitted for v in frame) + 1 for c in range(3)]
        bottom = ((lo[0] + hi[0]) / 2 * scale, lo[1] * scale, (lo[2] + hi[2]) / 2 * scale)
        turned = rotate(tilt, bottom)
        want = [p - t for p, t in zip([-1, 0, 0.5], turned)]
        expect(close(numbers(cube, "position"), want, 1e-4), f"box: hq:position {numbers(cube, 'position')} = {want}")

        # What the AVC streams themselves say (their SPS VUI timing), not what the MPD says.
        for rung, maps in ((0, 1), (1, 2)):
            rates = video_timing.picture_rates(os.path.join(out, "dancer", str(rung), "seg-00000.v3c"))
            want = {"occupancy": 24, "geometry": 24 * maps, "attribute": 24 * maps}
            expect(rates == want, f"dancer quality {rung} ({maps} map{'s' * (maps > 1)}): video pictures/s {rates} = {want}")

        segment = os.path.join(out, "dancer", "1", "seg-00000.v3c")
        decoded = subprocess.run([os.path.join(build, "vpcc-decode"), segment], capture_output=True, text=True)
        expect(decoded.returncode == 0 and "48 frames in" in decoded.stdout, "a 2-s segment at 24 fps decodes to 48 frames")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
