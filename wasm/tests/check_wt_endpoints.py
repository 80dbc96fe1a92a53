#!/usr/bin/env python3
"""WebTransport endpoints in the packager's MPD (docs/mpd.md → "WebTransport endpoints"): a scene
file's "webtransportEndpoints" are written as MPD-level SupplementalProperty elements after the
Period, in order and XML-escaped; --wt-endpoint on the command line replaces the file's list; a
scene without either has none. Each pack is one demo figure, one rung, one second.

    check_wt_endpoints.py BUILD_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_mpd  # noqa: E402

SCHEME = "urn:holoquic:webtransport:2026"
from checking import expect, failures  # noqa: E402


def pack(build, scene_path, out, extra):
    run = subprocess.run([os.path.join(build, "holoquic-pack"), "scene", scene_path, "--out", out, "--threads", "2"] + extra,
                         capture_output=True, text=True)
    expect(run.returncode == 0, f"holoquic-pack scene {' '.join(extra)} exited {run.returncode}: {run.stderr.strip()[-300:]}")
    return run.returncode == 0


def endpoints(out):
    """The endpoint URLs of the MPD, and whether every MPD-level child after the Period is one."""
    root = check_mpd.check(out, rungs=1)
    children = list(root)
    period = [i for i, c in enumerate(children) if c.tag == "{urn:mpeg:dash:schema:mpd:2011}Period"]
    after = children[period[-1] + 1:] if period else []
    props = [c for c in children if c.tag == "{urn:mpeg:dash:schema:mpd:2011}SupplementalProperty"]
    placed = all(c in after for c in props)
    return [p.get("value") for p in props if p.get("schemeIdUri") == SCHEME], placed


def main(build):
    work = tempfile.mkdtemp(prefix="holoquic-check-wt-")
    try:
        listed = ["https://a.example.net:4433/holoquic", "https://b.example.net/holoquic?region=eu&tier=2"]
        scene = {
            "seconds": 1,
            "ladder": [{"lod": 2, "maps": 1, "geometryQp": 36, "attributeQp": 46}],
            "objects": [{"id": "dancer", "demo": {"seed": 0}}],
        }
        bare = os.path.join(work, "bare.json")
        with open(bare, "w") as f:
            json.dump(scene, f)
        with_list = os.path.join(work, "listed.json")
        with open(with_list, "w") as f:
            json.dump({**scene, "webtransportEndpoints": listed}, f)

        out = os.path.join(work, "content", "listed")
        if pack(build, with_list, out, []):
            urls, placed = endpoints(out)
            expect(urls == listed, f"the scene file's endpoints in order, '&' escaped and read back: {urls}")
            expect(placed, "every SupplementalProperty follows the Period (DASH's order of MPD children)")
            with open(os.path.join(out, "manifest.mpd")) as f:
                expect("region=eu&amp;tier=2" in f.read(), "the URL's '&' is written as &amp;")

        out = os.path.join(work, "content", "flags")
        flags = ["--wt-endpoint", "https://c.example.net/holoquic", "--wt-endpoint", "https://d.example.net:8443/holoquic"]
        if pack(build, with_list, out, flags):
            urls, _ = endpoints(out)
            expect(urls == ["https://c.example.net/holoquic", "https://d.example.net:8443/holoquic"],
                   f"--wt-endpoint replaces the file's list, in the order given: {urls}")

        out = os.path.join(work, "content", "bare")
        if pack(build, bare, out, []):
            urls, _ = endpoints(out)
            expect(urls == [], f"no endpoints asked for, none written: {urls}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
