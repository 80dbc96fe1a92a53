#!/usr/bin/env python3
"""Writes a copy of a V3C sample stream whose video units (occupancy, geometry, attribute)
keep only their 4-byte unit header and 16 bytes of payload. The harness makes pictures from the
input bytes rather than decoding video, so the stripped stream exercises the same parsing,
atlas decoding and reconstruction in a few kB: small seeds the fuzzer mutates fast.

    strip_video.py IN.bin OUT.bin
"""
import sys

VIDEO_UNIT_TYPES = {2, 3, 4}  # V3C_OVD, V3C_GVD, V3C_AVD


def strip(data: bytes) -> bytes:
    precision = (data[0] >> 5) + 1  # ssvh_unit_size_precision_bytes_minus1, 3 bits
    out = bytearray(data[:1])
    pos = 1
    while pos + precision <= len(data):
        size = int.from_bytes(data[pos:pos + precision], "big")
        unit = data[pos + precision:pos + precision + size]
        pos += precision + size
        if (unit[0] >> 3) in VIDEO_UNIT_TYPES:
            unit = unit[:4 + 16]
        out += len(unit).to_bytes(precision, "big") + unit
    return bytes(out)


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        stripped = strip(f.read())
    with open(sys.argv[2], "wb") as f:
        f.write(stripped)
