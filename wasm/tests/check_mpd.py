#!/usr/bin/env python3
"""Checks a content directory written by holoquic-pack against docs/mpd.md: the MPD parses, every
Representation's segment files exist and are valid V3C sample streams (start with a VPS unit),
bandwidth is the peak segment size × 8 / segment duration, hq:v3cLevelIdc the highest level the
segments' V3C parameter sets declare, bounding boxes and rotations are sane.
Other checks import it (check(directory, rungs) returns the parsed MPD root).

    check_mpd.py CONTENT_DIR [RUNGS]   (RUNGS: Representations per object, default 5)"""
import math
import os
import sys
import xml.etree.ElementTree as ET

NS = {"d": "urn:mpeg:dash:schema:mpd:2011"}
HQ = "{urn:holoquic:mpd:2026}"


def fail(message):
    print(f"check_mpd: {message}")
    sys.exit(1)


def check(directory, rungs=5, growing=False):
    """`growing`: a stage of a scene still growing, whose MPD is dynamic (docs/mpd.md, "A growing scene")."""
    root = ET.parse(os.path.join(directory, "manifest.mpd")).getroot()
    if growing:
        if root.get("type") != "dynamic":
            fail("a growing scene's MPD@type is not dynamic")
        for attribute in ("minimumUpdatePeriod", "availabilityStartTime", "publishTime"):
            if not root.get(attribute):
                fail(f"a growing scene's MPD has no {attribute}")
    elif root.get("type") != "static" or root.get("minimumUpdatePeriod") is not None:
        fail("MPD@type is not static, or a static MPD has a minimumUpdatePeriod")
    sets = root.findall("d:Period/d:AdaptationSet", NS)
    if not sets:
        fail("no AdaptationSet")
    ids = set()
    for s in sets:
        oid = s.get(HQ + "objectId")
        if not oid or oid in ids:
            fail(f"missing or duplicate hq:objectId {oid}")
        ids.add(oid)
        q = [float(v) for v in s.get(HQ + "rotation").split()]
        if abs(math.hypot(*q) - 1) > 1e-3:
            fail(f"{oid}: rotation is not a unit quaternion")
        box = [float(v) for v in s.get(HQ + "bbox").split()]
        if len(box) != 6 or any(box[i] >= box[i + 3] for i in range(3)):
            fail(f"{oid}: empty bounding box {box}")
        n = int(s.get(HQ + "loopSegments"))
        template = s.find("d:SegmentTemplate", NS)
        base = s.find("d:BaseURL", NS).text
        reps = s.findall("d:Representation", NS)
        if len(reps) != rungs:
            fail(f"{oid}: {len(reps)} representations, expected {rungs}")
        seconds = int(template.get("duration")) / int(template.get("timescale"))
        previous = 0
        for r in reps:
            sizes = []
            levels = []
            for k in range(int(template.get("startNumber")), n):
                media = template.get("media").replace("$RepresentationID$", r.get("id")).replace("$Number%05d$", f"{k:05d}")
                path = os.path.join(directory, base, media)
                if not os.path.isfile(path):
                    fail(f"{oid}/{r.get('id')}: missing {path}")
                with open(path, "rb") as f:
                    head = f.read(32)
                if len(head) < 6 or head[5] >> 3 != 0:  # precision byte, unit size, then the unit header
                    fail(f"{path}: does not start with a V3C parameter set unit")
                # The VPS follows the 4-byte unit header; its profile_tier_level has ptl_level_idc
                # after 7 bytes (tier + codec group, toolset, reconstruction, 32 reserved bits).
                levels.append(head[1 + (head[0] >> 5) + 1 + 4 + 7])
                sizes.append(os.path.getsize(path))
            peak = int(max(sizes) * 8 / seconds + 0.5)
            if int(r.get("bandwidth")) != peak:
                fail(f"{oid}/{r.get('id')}: bandwidth {r.get('bandwidth')} != peak {peak}")
            avg = int(r.get(HQ + "avgBandwidth"))
            if avg > int(r.get("bandwidth")):
                fail(f"{oid}/{r.get('id')}: average above peak")
            if avg < previous:
                fail(f"{oid}/{r.get('id')}: quality ladder is not increasing in rate")
            previous = avg
            if int(r.get(HQ + "v3cLevelIdc", "0")) != max(levels):
                fail(f"{oid}/{r.get('id')}: hq:v3cLevelIdc {r.get(HQ + 'v3cLevelIdc')} != the segments' highest level {max(levels)}")
    print(f"check_mpd: {len(sets)} objects OK")
    return root


if __name__ == "__main__":
    check(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
