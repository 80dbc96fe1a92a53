/**
 * Unit-quaternion maths for head orientation, scalar last: `[x, y, z, w]` (the WebXR / three.js /
 * trace-file order). Rotations compose like matrices: `multiply(a, b)` applies `b` first, then `a`.
 */
import type { Quat } from '../model/vectors';

export const IDENTITY: Quat = [0, 0, 0, 1];

/** Scales `q` to unit length; throws on a zero or non-finite quaternion, which encodes no rotation. */
export function normalize(q: Quat): Quat {
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  if (!(n > 0) || !Number.isFinite(n)) {
    throw new Error(`cannot normalize quaternion [${q.join(', ')}]`);
  }
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

/** Hamilton product `a·b`: the rotation `b` followed by `a`. */
export function multiply(a: Quat, b: Quat): Quat {
  const [ax, ay, az, aw] = a;
  const [bx, by, bz, bw] = b;
  return [
    aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw,
    aw * bw - ax * bx - ay * by - az * bz,
  ];
}

/** The inverse rotation of a unit quaternion. */
export function conjugate(q: Quat): Quat {
  return [-q[0], -q[1], -q[2], q[3]];
}

export function dot(a: Quat, b: Quat): number {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}

/**
 * Rotation angle in radians (0…π) taking `a` to `b`. Computed as 2·atan2(|vector part|, |w|) of the
 * relative rotation rather than 2·acos(|a·b|), which loses precision for small angles; the absolute
 * value makes `q` and `−q` (the same rotation) compare equal.
 */
export function angleBetween(a: Quat, b: Quat): number {
  const r = multiply(conjugate(normalize(a)), normalize(b));
  return 2 * Math.atan2(Math.hypot(r[0], r[1], r[2]), Math.abs(r[3]));
}

/** Spherical interpolation along the shorter arc; `s = 0` gives `a`, `s = 1` gives `b`. */
export function slerp(a: Quat, b: Quat, s: number): Quat {
  let d = dot(a, b);
  const sign = d < 0 ? -1 : 1;
  d *= sign;
  // Nearly equal rotations: sin(θ) → 0, so plain linear interpolation is the accurate choice.
  if (d > 0.9995) {
    return normalize([
      a[0] + s * (sign * b[0] - a[0]),
      a[1] + s * (sign * b[1] - a[1]),
      a[2] + s * (sign * b[2] - a[2]),
      a[3] + s * (sign * b[3] - a[3]),
    ]);
  }
  const theta = Math.acos(d);
  const wa = Math.sin((1 - s) * theta) / Math.sin(theta);
  const wb = (sign * Math.sin(s * theta)) / Math.sin(theta);
  return [wa * a[0] + wb * b[0], wa * a[1] + wb * b[1], wa * a[2] + wb * b[2], wa * a[3] + wb * b[3]];
}

/**
 * Rotation vector (axis × angle, radians) of a unit quaternion, taking the shorter of the two
 * equivalent rotations so the angle is at most π. Inverse of {@link fromRotationVector}.
 */
export function toRotationVector(q: Quat): [number, number, number] {
  const s = q[3] < 0 ? -1 : 1;
  const x = s * q[0];
  const y = s * q[1];
  const z = s * q[2];
  const w = s * q[3];
  const sinHalf = Math.hypot(x, y, z);
  if (sinHalf < 1e-12) return [2 * x, 2 * y, 2 * z];
  const angle = 2 * Math.atan2(sinHalf, w);
  const k = angle / sinHalf;
  return [k * x, k * y, k * z];
}

/** Unit quaternion rotating by `|v|` radians about the axis `v / |v|`. */
export function fromRotationVector(v: readonly [number, number, number]): Quat {
  const angle = Math.hypot(v[0], v[1], v[2]);
  if (angle < 1e-12) return normalize([v[0] / 2, v[1] / 2, v[2] / 2, 1]);
  const k = Math.sin(angle / 2) / angle;
  return [k * v[0], k * v[1], k * v[2], Math.cos(angle / 2)];
}

/**
 * The rotation accumulated in `dtSeconds` at constant world-frame angular velocity `omega` (rad/s).
 * Apply it to an orientation `q` as `multiply(fromAngularVelocity(omega, dt), q)`.
 */
export function fromAngularVelocity(omega: readonly [number, number, number], dtSeconds: number): Quat {
  return fromRotationVector([omega[0] * dtSeconds, omega[1] * dtSeconds, omega[2] * dtSeconds]);
}
