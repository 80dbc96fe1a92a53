#!/usr/bin/env python3
"""The command lines of holoquic-pack, vpcc-encode and vpcc-decode, run for real: every bad
option, value, file or scene file in the table is refused with its documented exit code and a
message naming what is wrong (never a crash), and --help of the tool and of each mode exits 0
and lists the exit codes.

    check_cli.py BUILD_DIR"""
import os
import subprocess
import sys
import tempfile

failures = []


def run(build, tool, args):
    try:
        result = subprocess.run([os.path.join(build, tool)] + args, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return None, "still running after 20 s: the bad value was taken and work started"
    return result.returncode, result.stdout + result.stderr


def expect(build, tool, args, code, *fragments):
    status, output = run(build, tool, args)
    shown = " ".join([tool] + args)
    missing = [f for f in fragments if f not in output]
    if status != code or missing:
        failures.append(f"{shown}: exit {status} (want {code}), missing {missing} in: {output.strip()[:300]}")
    else:
        print(f"ok   {shown} → {code}: {output.strip().splitlines()[-1] if output.strip() else ''}")


def main(build):
    work = tempfile.mkdtemp(prefix="holoquic-check-cli-")
    empty = os.path.join(work, "empty")
    os.mkdir(empty)
    out = os.path.join(work, "out")

    def scene(name, text):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    typo = scene("typo.json", '{"frameRate": 24, "objects": [{"id": "a", "demo": {}, "positon": [0, 0, 0]}]}')
    syntax = scene("syntax.json", '{\n  "frameRate": 24,\n  "objects": [ }\n')
    rate = scene("rate.json", '{"frameRate": 0, "objects": [{"id": "a", "demo": {}}]}')
    rung = scene("rung.json", '{"ladder": [{"lod": 1, "maps": 3, "geometryQp": 20, "attributeQp": 30}], "objects": [{"id": "a", "demo": {}}]}')
    both = scene("both.json", '{"ladder": [{"lod": 1, "maps": 1, "targetMbps": 5, "geometryQp": 20}], "objects": [{"id": "a", "demo": {}}]}')
    target = scene("target.json", '{"ladder": [{"lod": 1, "maps": 1, "targetMbps": 0}], "objects": [{"id": "a", "demo": {}}]}')
    offset = scene("offset.json", '{"ladder": [{"lod": 1, "maps": 1, "geometryQp": 20, "attributeQp": 30, "attributeQpOffset": 4}], "objects": [{"id": "a", "demo": {}}]}')
    noqp = scene("noqp.json", '{"ladder": [{"lod": 1, "maps": 1, "geometryQp": 20}], "objects": [{"id": "a", "demo": {}}]}')
    quaternion = scene("quaternion.json", '{"objects": [{"id": "a", "demo": {}, "rotation": [0, 0, 0, 2]}]}')
    sources = scene("sources.json", '{"objects": [{"id": "a", "demo": {}, "ply": "x"}]}')
    missing = scene("missing.json", '{"objects": [{"id": "a", "ply": "nowhere/frame_%04d.ply"}]}')
    notes = scene("frames.json", '{"frameRate": 30, "segmentSeconds": 0.25, "objects": [{"id": "a", "demo": {}}]}')
    plain = scene("plain.json", '{"webtransportEndpoints": ["https://a.test/holoquic", "http://b.test/holoquic"], "objects": [{"id": "a", "demo": {}}]}')
    endpoints = scene("endpoints.json", '{"webtransportEndpoints": "https://a.test/holoquic", "objects": [{"id": "a", "demo": {}}]}')
    usage, inputs = 2, 3

    pack = "holoquic-pack"
    table = [
        # (arguments, exit code, fragments the message must hold)
        ([], usage, "no mode"),
        (["bogus"], usage, "unknown mode 'bogus'"),
        (["--bogus"], usage, "--bogus"),
        (["demo", "--seconds", "abc"], usage, "--seconds", "'abc' is not a whole number"),
        (["demo", "--seconds", "-3"], usage, "--seconds", "out of range"),
        (["demo", "--seconds", "0"], usage, "--seconds", "out of range"),
        (["demo", "--seconds", "3601"], usage, "--seconds", "out of range"),
        (["demo", "--seconds", "99999999999999999999999"], usage, "--seconds", "out of range"),
        (["demo", "--seconds", "1.5"], usage, "--seconds", "not a whole number"),
        (["demo", "--seconds"], usage, "--seconds needs a value"),
        (["demo", "--threads", "0"], usage, "--threads", "out of range"),
        (["demo", "--threads", "--dense"], usage, "--threads needs a value"),
        (["demo", "--codec", "vp9"], usage, "--codec", "avc|hevc"),
        (["demo", "--inter", "2"], usage, "--inter", "0|1"),
        (["demo", "--frame-rate", "0"], usage, "--frame-rate", "out of range"),
        (["demo", "--frame-rate", "121"], usage, "--frame-rate", "out of range"),
        (["demo", "--segment-seconds", "0.33"], usage, "--segment-seconds", "whole number of frames"),
        (["demo", "--segment-seconds", "nan"], usage, "--segment-seconds", "not a number"),
        (["demo", "--frobnicate"], usage, "unknown option '--frobnicate'"),
        (["demo", "--object", "a=b"], usage, "--object is not an option of the demo mode"),
        (["ply", "--dense"], usage, "--dense is not an option of the ply mode"),
        (["ply", "--object", "a=" + empty], usage, "needs --out"),
        (["ply", "--out", out], usage, "at least one --object"),
        (["ply", "--out", out, "--object", "Bad_Id=" + empty], usage, "--object", "'Bad_Id'"),
        (["ply", "--out", out, "--object", "noequals"], usage, "--object", "ID=PATH"),
        (["ply", "--out", out, "--object", "a=" + empty, "--object", "a=" + empty], usage, "'a' is given twice"),
        (["ply", "--out", out, "--object", "a=" + empty, "--bits", "3"], usage, "--bits", "out of range"),
        (["ply", "--out", out, "--object", "a=" + empty, "--bits", "16"], usage, "--bits", "out of range"),
        (["ply", "--out", out, "--object", "a=" + empty, "--scale", "-1"], usage, "--scale", "out of range"),
        (["ply", "--out", out, "--object", "a=" + empty, "--scale", "0"], usage, "--scale", "out of range"),
        (["ply", "--out", out, "--object", "a=" + empty, "--unit", "0.001"], usage, "--unit needs --fit"),
        (["ply", "--out", out, "--object", "a=" + empty + "/f_%s.ply"], usage, "%d or %0Nd"),
        (["ply", "--out", out, "--object", "a=" + empty + "/f_%d_%d.ply"], usage, "more than one frame number"),
        (["ply", "--out", out, "--object", "a=" + empty], inputs, empty, "no .ply files"),
        (["ply", "--out", out, "--object", "a=" + os.path.join(work, "absent")], inputs, "absent", "no such folder"),
        (["ply", "--out", out, "--object", "a=" + empty + "/frame_%04d.ply"], inputs, "frame_0000.ply", "no frames"),
        (["gltf", "--out", out, "--object", "a=" + os.path.join(work, "absent.glb")], inputs, "absent.glb", "cannot read"),
        (["gltf", "--out", out, "--object", "a=x.glb", "--animation", "-1"], usage, "--animation", "out of range"),
        (["scene"], usage, "needs a scene file"),
        (["scene", os.path.join(work, "absent.json")], inputs, "absent.json", "cannot read"),
        (["scene", typo], usage, "typo.json", "objects[0].positon", "unknown key"),
        (["scene", syntax], usage, "syntax.json", "line 3"),
        (["scene", rate], usage, "rate.json", "frameRate", "out of range"),
        (["scene", rung], usage, "rung.json", "ladder[0].maps", "out of range"),
        (["scene", both], usage, "both.json", "ladder[0].geometryQp", "chosen by the packer"),
        (["scene", target], usage, "target.json", "ladder[0].targetMbps", "out of range"),
        (["scene", offset], usage, "offset.json", "ladder[0].attributeQpOffset", "only with \"targetMbps\""),
        (["scene", noqp], usage, "noqp.json", "ladder[0]", "missing \"attributeQp\"", "targetMbps"),
        (["scene", quaternion], usage, "quaternion.json", "objects[0].rotation", "not 1"),
        (["scene", sources], usage, "sources.json", "objects[0]", "exactly one source"),
        (["scene", notes], usage, "frames.json", "segmentSeconds", "whole number of frames"),
        (["scene", missing], inputs, "nowhere", "no frames"),
        (["scene", typo, "--dense"], usage, "--dense is not an option of the scene mode"),
        (["demo", "--wt-endpoint", "http://a.test/holoquic"], usage, "--wt-endpoint", "not an https URL"),
        (["demo", "--wt-endpoint", "https:///holoquic"], usage, "--wt-endpoint", "no host"),
        (["demo", "--wt-endpoint", "https://a.test/a b"], usage, "--wt-endpoint", "a blank"),
        (["demo"] + ["--wt-endpoint", "https://a.test/holoquic"] * 17, usage, "--wt-endpoint", "more than 16"),
        (["sample", "--wt-endpoint", "https://a.test/holoquic"], usage, "--wt-endpoint is not an option of the sample mode"),
        (["scene", plain], usage, "plain.json", "webtransportEndpoints[1]", "not an https URL"),
        (["scene", endpoints], usage, "endpoints.json", "webtransportEndpoints", "expected an array"),
    ]
    for args, *rest in table:
        if args[:1] == ["demo"]:
            args = args + ["--out", out]  # an accepted bad value would otherwise write content/demo here
        expect(build, pack, args, *rest)
    for mode in ["", "demo", "ply", "gltf", "sample", "scene"]:
        args = [mode, "--help"] if mode else ["--help"]
        expect(build, pack, args, 0, "Usage:", "Exit codes", "3  input")
    expect(build, pack, ["help", "ply"], 0, "--fit")
    # Nothing may have been written by any refusal.
    if os.path.exists(out) or os.path.exists(out + ".partial"):
        failures.append("a refused run left a content directory behind")

    encode = "vpcc-encode"
    frame = os.path.join(work, "frame.ply")
    with open(frame, "w") as f:
        f.write("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n0.25 0.5 0.75\n")
    for row in [
        ([], usage, "no output file"),
        (["-o", os.path.join(work, "x.v3c")], usage, "no input frames"),
        (["-o"], usage, "-o needs a value"),
        (["-o", os.path.join(work, "x.v3c"), "--maps", "3", frame], usage, "--maps", "out of range"),
        (["-o", os.path.join(work, "x.v3c"), "--qp-geo", "abc", frame], usage, "--qp-geo", "not a whole number"),
        (["-o", os.path.join(work, "x.v3c"), "--qp-attr", "52", frame], usage, "--qp-attr", "out of range"),
        (["-o", os.path.join(work, "x.v3c"), "--occupancy-precision", "3", frame], usage, "--occupancy-precision", "1|2|4"),
        (["-o", os.path.join(work, "x.v3c"), "--bogus", frame], usage, "unknown option '--bogus'"),
        (["-o", os.path.join(work, "x.v3c"), os.path.join(work, "absent.ply")], inputs, "absent.ply", "cannot open"),
        (["-o", os.path.join(work, "x.v3c"), frame], inputs, "frame.ply", "not on the voxel grid", "--fit"),
        (["--help"], 0, "Usage:", "Exit codes"),
    ]:
        expect(build, encode, *row)

    decode = "vpcc-decode"
    for row in [
        ([], usage, "no stream given"),
        (["--bogus"], usage, "unknown option '--bogus'"),
        ([frame, "--ply"], usage, "--ply needs a value"),
        ([frame, "--ply", "out_%s_%n.ply"], usage, "--ply", "%d or %0Nd"),
        ([frame, frame], usage, "one stream at a time"),
        ([os.path.join(work, "absent.v3c")], inputs, "cannot read", "absent.v3c"),
        ([frame], inputs, "invalid bitstream"),
        (["--help"], 0, "Usage:", "Exit codes"),
    ]:
        expect(build, decode, *row)

    for failure in failures:
        print(f"FAIL {failure}")
    subprocess.run(["rm", "-rf", work])
    if failures:
        sys.exit(1)
    print("check_cli: every refusal and help page as documented")


if __name__ == "__main__":
    main(sys.argv[1])
