#!/usr/bin/env python3
"""Bytes per V3C sub-bitstream of V3C sample streams (ISO/IEC 23090-5 Annex C): parameter sets,
atlas, occupancy, geometry and attribute video, each with its share of the stream, so a stream
of ours can be set against one of TMC2's (docs/benchmarks.md, "Encoder rate-distortion").

    scripts/rd/substreams.py STREAM.v3c... [--frames N]

With --frames, bytes per frame too. A unit header's type is its first 5 bits; each unit is
preceded by its size in the precision the sample stream header declares."""
import argparse
import sys

UNIT_NAMES = {0: "parameter sets", 1: "atlas", 2: "occupancy", 3: "geometry", 4: "attribute", 5: "packed"}


def unit_sizes(data: bytes) -> dict:
    if not data:
        raise ValueError("empty stream")
    precision = (data[0] >> 5) + 1  # ssnh_unit_size_precision_bytes_minus1
    sizes, at = {}, 1
    while at < len(data):
        if at + precision > len(data):
            raise ValueError(f"truncated unit size at byte {at}")
        size = int.from_bytes(data[at:at + precision], "big")
        at += precision
        if size == 0 or at + size > len(data):
            raise ValueError(f"unit of {size} bytes at byte {at} runs past the stream")
        name = UNIT_NAMES.get(data[at] >> 3, f"type {data[at] >> 3}")
        sizes[name] = sizes.get(name, 0) + precision + size
        at += size
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("streams", nargs="+")
    parser.add_argument("--frames", type=int, default=0, help="frames in each stream: adds bytes per frame")
    args = parser.parse_args()
    for path in args.streams:
        data = open(path, "rb").read()
        try:
            sizes = unit_sizes(data)
        except ValueError as error:
            print(f"{path}: {error}", file=sys.stderr)
            return 1
        print(f"{path}: {len(data)} bytes")
        for name, size in sizes.items():
            per_frame = f"  {size / args.frames:9.0f} per frame" if args.frames else ""
            print(f"  {name:15} {size:9d}  {100 * size / len(data):5.1f} %{per_frame}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
