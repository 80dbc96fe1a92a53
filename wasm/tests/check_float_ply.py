#!/usr/bin/env python3
"""A float-coordinate PLY sequence in millimetres (float_ply.py: every usual PLY variant), given
as a numbered pattern starting at 1, packed with --fit --unit 0.001 and decoded back: the MPD's
hq:scale is the fitted metres per voxel (so the player shows real size, and the bounding box
measures the box's real 0.43 m), and the decoded points of the top rung lie on the grid positions
of the fitted input within one quantisation step, with the input's colours.

    check_float_ply.py BUILD_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_mpd  # noqa: E402
import float_ply  # noqa: E402

BITS = 7
FRAMES = 10
THICKNESS = 4  # the encoder's surface thickness: the far map's depth range
from checking import expect, failures  # noqa: E402


def within(point, voxels, steps):
    """Whether a fitted voxel lies within `steps` grid steps (in each axis) of `point`."""
    span = range(-steps, steps + 1)
    return any((point[0] + dx, point[1] + dy, point[2] + dz) in voxels for dx in span for dy in span for dz in span)


def main(build):
    work = tempfile.mkdtemp(prefix="holoquic-check-float-ply-")
    try:
        pattern, clouds = float_ply.write_sequence(os.path.join(work, "frames"), FRAMES, first=1)
        out = os.path.join(work, "content", "boxes")
        run = subprocess.run([os.path.join(build, "holoquic-pack"), "ply", "--out", out, "--object", "box=" + pattern, "--fit",
                              "--unit", "0.001", "--bits", str(BITS), "--frame-rate", str(FRAMES), "--threads", "2"],
                             capture_output=True, text=True)
        print(run.stdout + run.stderr)
        if run.returncode != 0:
            expect(False, f"holoquic-pack exited {run.returncode}")
            return
        expect("\r" not in run.stderr, "progress off a terminal has no carriage returns")
        expect("box 1/1 done" in run.stderr and "total 1/1 segments" in run.stderr, "progress names the object and the total")
        root = check_mpd.check(out)
        adaptation = root.find("d:Period/d:AdaptationSet", check_mpd.NS)
        origin, per_unit = float_ply.fit(clouds, BITS)
        scale = float(adaptation.get(check_mpd.HQ + "scale"))
        expect(abs(scale - 0.001 / per_unit) < 1e-6 * scale, f"hq:scale {scale} = 1 mm / {per_unit:.6g} voxels per mm")
        box = [float(v) for v in adaptation.get(check_mpd.HQ + "bbox").split()]
        longest = max(box[3 + c] - box[c] for c in range(3))
        real = (float_ply.SIZE[0] + 3.1 * (FRAMES - 1)) / 1000  # the box's length plus its motion, metres
        expect(abs(longest - real) <= 2 * scale, f"bounding box's longest side {longest:.4f} m ≈ the real {real:.4f} m")

        top = os.path.join(out, "box", "4", "seg-00000.v3c")
        decoded = subprocess.run([os.path.join(build, "vpcc-decode"), top, "--ply", os.path.join(work, "decoded_%02d.ply")],
                                 capture_output=True, text=True)
        expect(decoded.returncode == 0, f"vpcc-decode exit {decoded.returncode} {decoded.stderr.strip()}")
        if decoded.returncode != 0:
            return
        for f in range(FRAMES):
            wanted = float_ply.voxels(clouds[f], origin, per_unit)
            points = float_ply.read_ascii_ply(os.path.join(work, f"decoded_{f:02d}.ply"))
            near = [p for p in points if within(p, wanted, 1)]
            far = [p for p in points if not within(p, wanted, THICKNESS)]
            exact = sum(1 for p in points if p[:3] in wanted)
            got = {p[:3] for p in points}
            covered = sum(1 for v in wanted if within(v, got, 1))
            colour_in = [sum(c[i] for c in wanted.values()) / len(wanted) for i in range(3)]
            colour_out = [sum(p[3 + i] for p in points) / max(len(points), 1) for i in range(3)]
            colour_error = max(abs(a - b) for a, b in zip(colour_in, colour_out))
            print(f"     frame {f} (variant {f % 4}): {len(wanted)} fitted voxels, {len(points)} decoded, "
                  f"{exact} exactly on them, {len(near)} within a step, {covered} covered; mean colour off by {colour_error:.1f}")
            # The top rung's geometry video is lossy (QP 14): most points land exactly on a fitted
            # voxel, nearly all within one grid step, none further than the surface thickness.
            expect(len(points) > 0 and exact >= 0.9 * len(points), f"frame {f}: ≥ 90 % of the decoded points on fitted voxels")
            expect(len(near) >= 0.95 * len(points), f"frame {f}: ≥ 95 % within one grid step")
            expect(not far, f"frame {f}: none further than {THICKNESS} steps ({len(far)})")
            expect(covered >= 0.95 * len(wanted), f"frame {f}: the fitted input is covered")
            expect(colour_error < 8, f"frame {f}: colours kept (variant {f % 4})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
