#!/usr/bin/env python3
"""The quality ladder's rungs picked from a measured grid (docs/benchmarks.md, "The quality ladder
re-derived"): reads ladder_sweep.sh's rows, finds the rate-quality convex hull and picks the
rungs spread over it.

Quality: one number per candidate is needed to order rungs, and a ladder has to serve both the
shape (D1) and the colour (Y) of an object, so quality here is their mean, (D1 + Y) / 2 in dB —
a dB of either counts the same. One ladder serves every object, so each candidate's rate is the
geometric mean of its rates over the objects (each object weighs the same whatever its size) and
its quality the mean of its qualities. The hull is the upper convex hull of quality against
log2(rate): candidates under it give less quality per bit than a mix of two on it.

Rungs: RUNGS candidates (default 5) on the hull — within SLACK dB of it (default 0.2: a grid's
steps leave gaps in the hull that a point just under it fills) — each of more quality than the one
below, chosen so each rung's rate is between 1.6 and 2 times the one below where the hull allows
it (otherwise as near that as it gets), then the widest span, then the nearest the hull. With
--bottom, the lowest rung is the candidate named (lod/maps/geo/attr): what a player falls back to
on a poor link is a choice of its own, not a hull's. Prints the hull and the chosen rungs with
every object's rate, D1, Y and points.

    ladder_hull.py GRID.tsv [--rungs 5] [--low 1.6] [--high 2.0] [--slack 0.2] [--bottom 2/1/36/46]
"""
import argparse
import itertools
import math
from collections import defaultdict


def read(path):
    """Rows by candidate (codec, lod, maps, qp_geo, qp_attr) → {object: (kbps, d1, y, points)}."""
    cells = defaultdict(dict)
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        obj, codec, lod, maps, geo, attr, kbps, d1, y, points = line.rstrip("\n").split("\t")
        cells[(codec, int(lod), int(maps), int(geo), int(attr))][obj] = (float(kbps), float(d1), float(y), float(points))
    return cells


def aggregate(cells):
    """Each candidate measured on every object: (log2 geometric-mean rate, mean quality)."""
    objects = set().union(*(c.keys() for c in cells.values()))
    out = {}
    for key, per in cells.items():
        if set(per) != objects or any(not math.isfinite(v[1] + v[2]) for v in per.values()):
            continue
        log_rate = sum(math.log2(v[0]) for v in per.values()) / len(per)
        quality = sum((v[1] + v[2]) / 2 for v in per.values()) / len(per)
        out[key] = (log_rate, quality)
    return sorted(objects), out


def upper_hull(points):
    """Upper convex hull of (x, y, key), x ascending; only the rising part (more rate, more quality)."""
    hull = []
    for p in sorted(points):
        while len(hull) >= 2:
            (x1, y1, _), (x2, y2, _) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) >= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    rising = [hull[0]]
    for p in hull[1:]:
        if p[1] > rising[-1][1]:
            rising.append(p)
    return rising


def below_hull(hull, x, q):
    """How far (dB) the point (x, q) lies under the hull's piecewise-linear line (0 at or above it)."""
    if x <= hull[0][0]:
        return max(0.0, hull[0][1] - q) if x == hull[0][0] else 0.0
    for (x1, y1, _), (x2, y2, _) in zip(hull, hull[1:]):
        if x <= x2:
            return max(0.0, y1 + (y2 - y1) * (x - x1) / (x2 - x1) - q)
    return max(0.0, hull[-1][1] - q)


def pick(near, rungs, low, high, keep_first=False):
    """The rungs-subset of `near` (x, q, key, gap), rising in quality, whose rate steps stray least
    (in log2) outside [low, high], then the widest span, then the smallest gaps to the hull."""
    lo, hi = math.log2(low), math.log2(high)
    best = None
    for combo in itertools.combinations(range(len(near)), rungs):
        if keep_first and combo[0] != 0:
            continue
        chosen = [near[i] for i in combo]
        if any(b[1] <= a[1] for a, b in zip(chosen, chosen[1:])):
            continue
        steps = [b[0] - a[0] for a, b in zip(chosen, chosen[1:])]
        stray = sum(max(0, lo - s, s - hi) ** 2 for s in steps)
        score = (round(stray, 4), -round(chosen[-1][0] - chosen[0][0], 2), sum(c[3] for c in chosen))
        if best is None or score < best[0]:
            best = (score, chosen)
    return best[1]


def describe(key):
    codec, lod, maps, geo, attr = key
    return f"{codec} lod {lod} maps {maps} QP {geo}/{attr}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("grid")
    parser.add_argument("--rungs", type=int, default=5)
    parser.add_argument("--low", type=float, default=1.6)
    parser.add_argument("--high", type=float, default=2.0)
    parser.add_argument("--slack", type=float, default=0.2)
    parser.add_argument("--bottom", help="lod/maps/geo/attr of the lowest rung")
    args = parser.parse_args()
    cells = read(args.grid)
    objects, agg = aggregate(cells)
    hull = upper_hull([(x, q, k) for k, (x, q) in agg.items()])
    print(f"# {len(agg)} candidates on {', '.join(objects)}; hull (geometric-mean kbit/s, mean (D1+Y)/2 dB):")
    for x, q, k in hull:
        print(f"#   {describe(k):32s} {2 ** x:9.0f} {q:6.2f}")
    near = sorted((x, q, k, below_hull(hull, x, q)) for k, (x, q) in agg.items())
    near = [n for n in near if n[3] <= args.slack]
    if args.bottom:
        want = tuple(int(v) for v in args.bottom.split("/"))
        bottom = [(x, q, k, below_hull(hull, x, q)) for k, (x, q) in agg.items() if k[1:] == want]
        if not bottom:
            parser.error(f"--bottom {args.bottom}: not in the grid")
        near = bottom + [n for n in near if n[0] > bottom[0][0] and n[1] > bottom[0][1]]
    print(f"# within {args.slack} dB of it: {len(near)}")
    chosen = pick(near, min(args.rungs, len(near)), args.low, args.high, keep_first=bool(args.bottom))
    print("rung\tcodec\tlod\tmaps\tqp_geo\tqp_attr\tgeomean_kbps\tstep\t" + "\t".join(f"{o}_kbps\t{o}_d1\t{o}_y\t{o}_points" for o in objects))
    previous = None
    for i, (x, q, k, _) in enumerate(chosen):
        step = "-" if previous is None else f"{2 ** (x - previous):.2f}"
        previous = x
        cols = []
        for o in objects:
            kbps, d1, y, points = cells[k][o]
            cols += [f"{kbps:.0f}", f"{d1:.2f}", f"{y:.2f}", f"{points:.0f}"]
        print("\t".join([str(i), k[0], str(k[1]), str(k[2]), str(k[3]), str(k[4]), f"{2 ** x:.0f}", step] + cols))


if __name__ == "__main__":
    main()
