#!/usr/bin/env python3
"""vpcc-quality run for real: figures on hand-made PLY frames (a known shift, identical frames,
the peak from --bits / --peak), every refusal with its exit code, --help; then real streams: a
TMC2 conformance stream decoded by vpcc-decode against TMC2's own decoded frame (identical: every
PSNR infinite), and two CesiumMan frames encoded with HEVC, decoded and measured (finite,
plausible figures). Exit 77 when the shared data is absent (the hand-made part still ran).

    check_quality_cli.py TOOLS_DIR SHARED_DIR"""
import json
import math
import os
import subprocess
import sys
import tempfile

tools, shared = sys.argv[1], sys.argv[2]
quality = os.path.join(tools, "vpcc-quality")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args, timeout=300):
    return subprocess.run([quality, *args], capture_output=True, text=True, timeout=timeout)


def write_ply(path, points):
    with open(path, "w") as f:
        f.write(f"ply\nformat ascii 1.0\nelement vertex {len(points)}\nproperty float x\nproperty float y\n"
                "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n")
        for p in points:
            f.write(" ".join(str(v) for v in p) + "\n")


work = tempfile.mkdtemp(prefix="holoquic-quality-")
line = [(100 + 8 * i, 200, 300, 20 * i, 255 - 20 * i, 90) for i in range(5)]
write_ply(os.path.join(work, "src_0000.ply"), line)
write_ply(os.path.join(work, "src_0001.ply"), line)
write_ply(os.path.join(work, "dec_0000.ply"), [(x, y + 1, z, r, g, b) for x, y, z, r, g, b in line])
write_ply(os.path.join(work, "dec_0001.ply"), line)
src, dec = os.path.join(work, "src_%04d.ply"), os.path.join(work, "dec_%04d.ply")

# Figures: frame 0 moved 1 voxel (D1 = 10·log10(3·1023²)), frame 1 identical (infinite: null).
done = run(src, dec, "--json")
check(done.returncode == 0, f"json run exits 0 ({done.returncode} {done.stderr.strip()})")
report = json.loads(done.stdout) if done.returncode == 0 else {"frames": [], "average": {}}
check(len(report["frames"]) == 2, "both numbered frames found without --frames")
if len(report["frames"]) == 2:
    first, second = report["frames"]
    check(abs(first["d1Psnr"] - 10 * math.log10(3 * 1023**2)) < 1e-3, f"D1 of a 1-voxel shift: {first['d1Psnr']}")
    check(first["d1Mse"] == 1 and first["yPsnr"] is None, "shift: D1 MSE 1, colours identical (null)")
    directions = [first.get(d, {}).get("d1Mse") for d in ("sourceToDecoded", "decodedToSource")]
    check(directions == [1, 1], f"shift: each direction's D1 MSE is 1 too ({directions})")
    check(all(second[k] is None for k in ("d1Psnr", "d2Psnr", "yPsnr", "uPsnr", "vPsnr")), "identical frame: every PSNR null")
    check(report["average"]["d1Psnr"] is None, "the average over an infinite frame is infinite")
check(report.get("peak") == 1023, "default peak 1023 (10 bits)")
done = run(src, dec, "--frames", "1", "--bits", "11", "--json")
figures = json.loads(done.stdout) if done.returncode == 0 else {}
check(figures.get("peak") == 2047 and abs(figures["average"]["d1Psnr"] - 10 * math.log10(3 * 2047**2)) < 1e-3, "--bits 11: peak 2047")
done = run(src, dec, "--frames", "1", "--peak", "511", "--json")
figures = json.loads(done.stdout) if done.returncode == 0 else {}
check(figures.get("peak") == 511, "--peak 511")
done = run(os.path.join(work, "src_0000.ply"), os.path.join(work, "dec_0001.ply"))
check(done.returncode == 0 and "average" in done.stdout and done.stdout.count("inf") >= 5, "single files, table with inf")
done = run("--help")
check(done.returncode == 0 and done.stdout.startswith("Usage: vpcc-quality"), "--help")

# Refusals: usage (2) and input (3).
write_ply(os.path.join(work, "half_0000.ply"), [(0.5, 1, 2, 0, 0, 0)])
for args, code, what in [
    ([src, dec, "--bits", "10", "--peak", "100"], 2, "--bits with --peak"),
    ([src, dec, "--bits", "0"], 2, "--bits 0"),
    ([src, dec, "--bits", "ten"], 2, "--bits ten"),
    ([src, dec, "--peak", "-1"], 2, "--peak -1"),
    ([src, dec, "--frames", "0"], 2, "--frames 0"),
    ([src, dec, "--bogus"], 2, "unknown option"),
    ([src], 2, "one cloud only"),
    ([src, dec, dec], 2, "three clouds"),
    ([os.path.join(work, "src_%04d_%d.ply"), dec], 2, "two number fields"),
    ([os.path.join(work, "src_%x.ply"), dec], 2, "a conversion other than %d"),
    ([src, os.path.join(work, "dec_0000.ply")], 2, "a pattern against a file"),
    ([src, dec, "--frames", "3"], 3, "a frame missing"),
    ([src, dec, "--first", "7"], 3, "no frame at --first"),
    ([os.path.join(work, "half_%04d.ply"), dec], 3, "coordinates off the grid"),
    ([os.path.join(work, "nothing.ply"), os.path.join(work, "dec_0000.ply")], 3, "a missing file"),
]:
    done = run(*args)
    check(done.returncode == code and done.stderr.startswith("vpcc-quality: "), f"{what}: exit {done.returncode} (want {code}) {done.stderr.strip()}")

# Real streams.
missing = []
stream = os.path.join(shared, "vpcc", "synth_ai_r4", "synth_ai_r4.bin")
tmc2_frame = os.path.join(shared, "vpcc", "synth_ai_r4", "dec", "synth_ai_r4_dec_0000.ply")
if os.path.exists(stream) and os.path.exists(tmc2_frame):
    ours = os.path.join(work, "synth_%04d.ply")
    done = subprocess.run([os.path.join(tools, "vpcc-decode"), stream, "--ply", ours], capture_output=True, text=True, timeout=600)
    check(done.returncode == 0, f"vpcc-decode synth_ai_r4 ({done.stderr.strip()})")
    done = run(tmc2_frame, ours.replace("%04d", "0000"), "--json")
    figures = json.loads(done.stdout) if done.returncode == 0 else {"frames": [{}], "average": {}}
    frame = figures["frames"][0]
    check(frame.get("sourcePoints", 0) > 400000 and frame.get("decodedPoints") == frame.get("sourcePoints"), f"TMC2's frame and ours: {frame.get('sourcePoints')} / {frame.get('decodedPoints')} points")
    check(all(frame.get(k, 0) is None for k in ("d1Psnr", "d2Psnr", "yPsnr", "uPsnr", "vPsnr")), "our decoding of a TMC2 stream equals TMC2's: every PSNR infinite")
else:
    missing.append(stream)

cesium = os.path.join(shared, "data", "pointclouds", "cesiumman", "cesiumman_vox10_%04d.ply")
if os.path.exists(cesium % 0) and os.path.exists(cesium % 1):
    v3c = os.path.join(work, "cesium.v3c")
    done = subprocess.run([os.path.join(tools, "vpcc-encode"), "-o", v3c, "--codec", "hevc", "--threads", "2", cesium % 0, cesium % 1],
                          capture_output=True, text=True, timeout=600)
    check(done.returncode == 0, f"vpcc-encode two CesiumMan frames ({done.stderr.strip()})")
    decoded = os.path.join(work, "cesium_dec_%04d.ply")
    done = subprocess.run([os.path.join(tools, "vpcc-decode"), v3c, "--ply", decoded], capture_output=True, text=True, timeout=600)
    check(done.returncode == 0, f"vpcc-decode it ({done.stderr.strip()})")
    done = run(cesium, decoded, "--frames", "2", "--json")
    figures = json.loads(done.stdout) if done.returncode == 0 else {"frames": [], "average": {}}
    average = figures["average"]
    plausible = all(isinstance(average.get(k), float) for k in ("d1Psnr", "d2Psnr", "yPsnr", "uPsnr", "vPsnr"))
    plausible = plausible and 55 < average["d1Psnr"] < 90 and average["d2Psnr"] >= average["d1Psnr"] - 1 and 20 < average["yPsnr"] < 60
    check(plausible, f"CesiumMan through our encoder and decoder: finite, plausible figures {average}")
    points = [f["decodedPoints"] / f["sourcePoints"] for f in figures["frames"]]
    check(len(points) == 2 and all(0.8 < p < 1.3 for p in points), f"decoded/source points {points}")
else:
    missing.append(cesium % 0)

print(f"{len(failures) == 0 and 'all passed' or str(len(failures)) + ' failed'}")
if failures:
    sys.exit(1)
if missing:
    print("skipped (absent): " + ", ".join(missing))
    sys.exit(77)
