#!/usr/bin/env python3
"""A growing scene (holoquic-pack --grow, docs/packaging.md "Watching a scene grow"): stopped with
SIGINT as soon as its first stage is published, the directory holds a valid, playable scene — the
MPD parses, is dynamic (players re-read it), names the first 3 s at the lowest quality, and every
segment it names exists — and is marked unfinished (packing.jsonl); run again, the packer resumes
(nothing packed twice) and finishes the whole scene, its MPD static again, log gone; that scene
is byte for byte the one packing in one step gives. --grow refuses to overwrite a finished scene.

    check_grow.py BUILD_DIR"""
import filecmp
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_mpd  # noqa: E402

HQ = "{urn:holoquic:mpd:2026}"
from checking import expect, failures  # noqa: E402


def stage_of(directory):
    """(segments, rungs) the manifest names, after check_mpd has checked every file it names."""
    root = ET.parse(os.path.join(directory, "manifest.mpd")).getroot()
    sets = root.findall("{urn:mpeg:dash:schema:mpd:2011}Period/{urn:mpeg:dash:schema:mpd:2011}AdaptationSet")
    reps = sets[0].findall("{urn:mpeg:dash:schema:mpd:2011}Representation")
    return int(sets[0].get(HQ + "loopSegments")), len(reps), root.get("mediaPresentationDuration")


def main(build):
    pack = os.path.join(build, "holoquic-pack")
    work = tempfile.mkdtemp(prefix="holoquic-check-grow-")
    try:
        # 4 one-second segments at 10 fps, two rungs: stages 3 s at q0, 4 s at q0, 4 s at q0–1.
        scene_file = os.path.join(work, "grow.json")
        with open(scene_file, "w") as f:
            json.dump({"frameRate": 10, "seconds": 4,
                       "ladder": [{"lod": 2, "maps": 1, "geometryQp": 36, "attributeQp": 46},
                                  {"lod": 1, "maps": 1, "geometryQp": 28, "attributeQp": 34}],
                       "objects": [{"id": "dancer", "demo": {"seed": 1}}]}, f)
        grown = os.path.join(work, "grown")
        log = os.path.join(grown, "packing.jsonl")

        # One thread, stopped the moment the first stage is announced.
        packer = subprocess.Popen([pack, "scene", scene_file, "--out", grown, "--grow", "--threads", "1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        announced = None
        for line in packer.stderr:
            if "published" in line:
                announced = line.strip()
                packer.send_signal(signal.SIGINT)
                break
        rest = packer.stderr.read()
        code = packer.wait(timeout=120)
        expect(announced is not None and "3 s at quality 0 — playable now" in announced,
               f"the first stage is announced as playable: {announced}")
        expect(code == 128 + signal.SIGINT and "the same command finishes it" in rest, f"SIGINT stops it with a word on resuming (exit {code})")
        # Parses, dynamic (players re-read it), every named segment exists and starts with a V3C parameter set.
        check_mpd.check(grown, 1, growing=True)
        segments, rungs, duration = stage_of(grown)
        # The first stage unless the packer finished a whole further cell before the signal arrived.
        expect((segments, rungs) in ((3, 1), (4, 1)), f"the stopped scene is a published stage: {segments} segments × {rungs} rungs ({duration})")
        expect(os.path.isfile(log) and not os.path.exists(os.path.join(grown, "report.json")),
               "the stopped scene is marked unfinished (packing.jsonl, no report)")
        with open(log) as f:
            packed_before = len(f.readlines()) - 1

        # Resumed: finishes, with nothing packed twice.
        done = subprocess.run([pack, "scene", scene_file, "--out", grown, "--grow", "--threads", "2"], capture_output=True, text=True, timeout=600)
        expect(done.returncode == 0, f"the second run finishes the scene (exit {done.returncode}) {done.stderr[-300:]}")
        expect(f"resuming {grown}: {packed_before} of 8 segment files" in done.stderr, f"it resumes from the {packed_before} segment files packed before")
        expect(done.stderr.count("progress:") <= 8 - packed_before, "and packs only the rest")
        check_mpd.check(grown, 2)  # the finished scene's MPD is static again
        expect(stage_of(grown) == (4, 2, "PT4S"), "the finished scene names every segment at both rungs")
        expect(not os.path.exists(log) and os.path.isfile(os.path.join(grown, "report.json")), "finished: the log is gone, the report written")
        leftovers = [os.path.join(d, n) for d, _, names in os.walk(grown) for n in names if n.endswith(".tmp")]
        expect(not leftovers, f"no temporary files left: {leftovers}")

        # The same scene packed in one step: the same manifest, segments and report.
        whole = os.path.join(work, "whole")
        one = subprocess.run([pack, "scene", scene_file, "--out", whole, "--threads", "2"], capture_output=True, text=True, timeout=600)
        expect(one.returncode == 0, "the scene packs in one step too")
        same = filecmp.dircmp(grown, whole)
        differing = []

        def walk(c, prefix=""):
            differing.extend(prefix + n for n in c.diff_files + c.left_only + c.right_only)
            for name, sub in c.subdirs.items():
                walk(sub, prefix + name + "/")
        walk(same)
        # The scene name (the directory's) differs by design; compare the manifests without it.
        differing = [d for d in differing if d != "manifest.mpd" and d != "report.json"]
        with open(os.path.join(grown, "manifest.mpd")) as a, open(os.path.join(whole, "manifest.mpd")) as b:
            expect(a.read().replace('hq:scene="grown"', "") == b.read().replace('hq:scene="whole"', ""), "grown and one-step manifests are the same")
        expect(not differing, f"grown and one-step segment files are the same: {differing[:5]}")

        # A finished scene is not overwritten by --grow.
        again = subprocess.run([pack, "scene", scene_file, "--out", whole, "--grow"], capture_output=True, text=True, timeout=60)
        expect(again.returncode == 4 and "holds a finished scene" in again.stderr, f"--grow refuses a finished scene (exit {again.returncode}): {again.stderr.strip()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"check_grow: {len(failures)} failed")
        sys.exit(1)
    print("check_grow: a growing scene is playable at its first stage, resumes and ends as packed in one step")


if __name__ == "__main__":
    main(sys.argv[1])
