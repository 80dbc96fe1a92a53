"""Test input for the packager's float-PLY path: a moving hollow box measured in millimetres (not
on any grid), written as a numbered frame sequence that cycles through the usual PLY variants —
ASCII and binary little endian, float and double coordinates, uchar, ushort and float colours,
extra properties before and after x y z, a face element after the vertices — and the grid fit
docs/packaging.md promises, computed here independently of the packager."""
import math
import os
import struct

# The box: 400 × 200 × 100 mm, one colour per face pair, sampled every 2 mm.
SIZE = (400.0, 200.0, 100.0)
STEP = 2.0
ORIGIN = (-150.3, 20.7, 33.1)
COLOURS = [(200, 60, 40), (40, 180, 70), (50, 80, 210)]


def box_points(frame):
    """Points (x, y, z, (r, g, b)) of the box surface at `frame`, moving a few mm per frame."""
    shift = (ORIGIN[0] + 3.1 * frame, ORIGIN[1] + 0.7 * frame, ORIGIN[2] - 1.3 * frame)
    points = []
    for axis in range(3):
        u_axis, v_axis = [a for a in range(3) if a != axis]
        nu, nv = int(SIZE[u_axis] / STEP), int(SIZE[v_axis] / STEP)
        for side in (0.0, SIZE[axis]):
            for i in range(nu + 1):
                for j in range(nv + 1):
                    p = [0.0, 0.0, 0.0]
                    p[axis], p[u_axis], p[v_axis] = side, i * STEP, j * STEP
                    points.append((p[0] + shift[0], p[1] + shift[1], p[2] + shift[2], COLOURS[axis]))
    return points


def write_variant(path, points, variant):
    """One PLY file in variant 0 … 3 (see the module's docstring)."""
    n = len(points)
    if variant == 0:  # ASCII, float xyz, uchar colours, normals after
        with open(path, "w") as f:
            f.write(f"ply\nformat ascii 1.0\ncomment float coordinates in mm\nelement vertex {n}\n"
                    "property float x\nproperty float y\nproperty float z\nproperty uchar red\nproperty uchar green\n"
                    "property uchar blue\nproperty float nx\nproperty float ny\nproperty float nz\nend_header\n")
            for x, y, z, c in points:
                f.write(f"{x:.4f} {y:.4f} {z:.4f} {c[0]} {c[1]} {c[2]} 0 1 0\n")
    elif variant == 1:  # binary, double xyz, ushort colours, alpha and quality after
        head = (f"ply\nformat binary_little_endian 1.0\nelement vertex {n}\nproperty double x\nproperty double y\n"
                "property double z\nproperty ushort red\nproperty ushort green\nproperty ushort blue\n"
                "property uchar alpha\nproperty float quality\nend_header\n")
        with open(path, "wb") as f:
            f.write(head.encode())
            f.write(b"".join(struct.pack("<dddHHHBf", x, y, z, c[0] * 257, c[1] * 257, c[2] * 257, 255, 0.5)
                             for x, y, z, c in points))
    elif variant == 2:  # binary, an int before float xyz, float colours 0 … 1
        head = (f"ply\nformat binary_little_endian 1.0\nelement vertex {n}\nproperty int flags\nproperty float x\n"
                "property float y\nproperty float z\nproperty float red\nproperty float green\nproperty float blue\nend_header\n")
        with open(path, "wb") as f:
            f.write(head.encode())
            f.write(b"".join(struct.pack("<iffffff", 7, x, y, z, c[0] / 255, c[1] / 255, c[2] / 255) for x, y, z, c in points))
    else:  # ASCII, double xyz, diffuse_* uchar colours, an empty face element after
        with open(path, "w") as f:
            f.write(f"ply\nformat ascii 1.0\nelement vertex {n}\nproperty double x\nproperty double y\nproperty double z\n"
                    "property uchar diffuse_red\nproperty uchar diffuse_green\nproperty uchar diffuse_blue\n"
                    "element face 0\nproperty list uchar int vertex_indices\nend_header\n")
            for x, y, z, c in points:
                f.write(f"{x!r} {y!r} {z!r} {c[0]} {c[1]} {c[2]}\n")


def write_sequence(folder, frames, first=1):
    """frame_NNNN.ply numbered from `first`; returns the pattern and each frame's points."""
    os.makedirs(folder, exist_ok=True)
    clouds = []
    for f in range(frames):
        points = box_points(f)
        write_variant(os.path.join(folder, f"frame_{f + first:04d}.ply"), points, f % 4)
        clouds.append(points)
    return os.path.join(folder, "frame_%04d.ply"), clouds


def fit(clouds, bits):
    """The documented fit: the sequence's box, its minimum corner at voxel 0, its longest side
    spanning 0 … 2^bits − 1. Returns (origin, voxels per unit)."""
    lo = [min(p[c] for cloud in clouds for p in cloud) for c in range(3)]
    hi = [max(p[c] for cloud in clouds for p in cloud) for c in range(3)]
    extent = max(hi[c] - lo[c] for c in range(3))
    return lo, ((1 << bits) - 1) / extent


def voxels(cloud, origin, per_unit):
    """Fitted voxel → mean colour."""
    sums = {}
    for x, y, z, c in cloud:
        key = tuple(int(math.floor((v - o) * per_unit + 0.5)) for v, o in zip((x, y, z), origin))
        s = sums.setdefault(key, [0, 0, 0, 0])
        for i in range(3):
            s[i] += c[i]
        s[3] += 1
    return {k: (s[0] / s[3], s[1] / s[3], s[2] / s[3]) for k, s in sums.items()}


def read_ascii_ply(path):
    """Points (x, y, z, r, g, b) of the ASCII PLY vpcc-decode --ply writes."""
    with open(path) as f:
        lines = f.read().splitlines()
    body = lines[lines.index("end_header") + 1:]
    return [tuple(int(float(v)) for v in line.split()[:6]) for line in body if line.strip()]
