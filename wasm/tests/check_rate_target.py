#!/usr/bin/env python3
"""Target bit rates per rung: a scene file whose ladder gives `targetMbps` instead of quantisers
packs a demo figure whose rate at each rung, over the whole scene (two segments; the QPs are
fitted on the first), is within 20 % of its target — x264's rate changes by about 12 % per QP
step, so the fit on the first segment lands within about 6 % and the second segment's content
adds the rest. The report names the QPs chosen, the fit took at most 7 encodes per rung, and the
MPD's bandwidth is the measured peak segment rate, not the target.

    check_rate_target.py BUILD_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_mpd  # noqa: E402

TOLERANCE = 0.20
from checking import expect, failures  # noqa: E402


def main(build):
    work = tempfile.mkdtemp(prefix="holoquic-check-rate-")
    try:
        targets = [0.5, 4.0]  # Mbit/s; the default QPs (28/34) would give about 1 and 2 Mbit/s here
        scene = {
            "seconds": 2,
            "ladder": [
                {"lod": 2, "maps": 1, "targetMbps": targets[0]},
                {"lod": 1, "maps": 1, "targetMbps": targets[1], "attributeQpOffset": 6},
            ],
            "objects": [{"id": "dancer", "demo": {"seed": 3}}],
        }
        path = os.path.join(work, "rates.json")
        with open(path, "w") as f:
            json.dump(scene, f)
        out = os.path.join(work, "content", "rates")
        run = subprocess.run([os.path.join(build, "holoquic-pack"), "scene", path, "--out", out, "--threads", "2"],
                             capture_output=True, text=True)
        print(run.stdout + run.stderr)
        expect(run.returncode == 0, f"holoquic-pack scene exited {run.returncode}")
        if run.returncode != 0:
            return
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        qualities = report["objects"][0]["qualities"]
        for q, target in enumerate(targets):
            r = qualities[q]
            achieved = r["avgKbps"] / 1000
            expect(abs(achieved / target - 1) <= TOLERANCE,
                   f"quality {q}: {achieved:.3f} Mbit/s over the scene is within {TOLERANCE:.0%} of the target {target} Mbit/s")
            expect(r.get("targetKbps") == target * 1000, f"quality {q}: report.json targetKbps {r.get('targetKbps')}")
            offset = 8 if q == 0 else 6
            expect(r["attributeQp"] - r["geometryQp"] == offset,
                   f"quality {q}: QPs {r['geometryQp']}/{r['attributeQp']} keep the attribute offset {offset}")
        fits = re.findall(r"dancer quality (\d): target .* \((\d+) encodes\)", run.stderr)
        expect(len(fits) == 2 and all(int(n) <= 7 for _, n in fits), f"one fit per rung, at most 7 encodes each: {fits}")

        root = check_mpd.check(out, rungs=2)
        for rep in root.iter("{urn:mpeg:dash:schema:mpd:2011}Representation"):
            q = rep.get("id")
            sizes = [os.path.getsize(os.path.join(out, "dancer", q, f"seg-0000{k}.v3c")) for k in range(2)]
            expect(int(rep.get("bandwidth")) == round(max(sizes) * 8 / 1.0),
                   f"quality {q}: MPD bandwidth {rep.get('bandwidth')} = the measured peak segment rate {max(sizes) * 8}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
