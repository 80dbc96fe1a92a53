import { describe, expect, it } from 'vitest';
import type { Quat } from '../model/vectors';
import {
  IDENTITY, angleBetween, conjugate, fromAngularVelocity, fromRotationVector, multiply, normalize, slerp, toRotationVector,
} from './quaternion';

const about = (axis: [number, number, number], angle: number): Quat => {
  const n = Math.hypot(...axis);
  return fromRotationVector([(axis[0] / n) * angle, (axis[1] / n) * angle, (axis[2] / n) * angle]);
};

function expectQuatClose(a: Quat, b: Quat): void {
  expect(angleBetween(a, b)).toBeLessThan(1e-9);
}

describe('quaternion', () => {
  it('normalizes and rejects the zero quaternion', () => {
    const q = normalize([0, 0, 3, 4]);
    expect(q).toEqual([0, 0, 0.6, 0.8]);
    expect(() => normalize([0, 0, 0, 0])).toThrow(/cannot normalize/);
  });

  it('multiplies rotations about one axis by adding angles', () => {
    const q = multiply(about([0, 1, 0], 0.3), about([0, 1, 0], 0.5));
    expectQuatClose(q, about([0, 1, 0], 0.8));
    expect(angleBetween(IDENTITY, q)).toBeCloseTo(0.8, 12);
  });

  it('applies the right-hand factor first (90° about X then 90° about Y ≠ reverse)', () => {
    const x = about([1, 0, 0], Math.PI / 2);
    const y = about([0, 1, 0], Math.PI / 2);
    expect(angleBetween(multiply(y, x), multiply(x, y))).toBeGreaterThan(0.1);
    // y·x rotates the vector (0,0,1): X maps it to (0,-1,0), then Y leaves it at (0,-1,0).
    const v: Quat = [0, 0, 1, 0];
    const r = multiply(multiply(multiply(y, x), v), conjugate(multiply(y, x)));
    expect(r[0]).toBeCloseTo(0, 12);
    expect(r[1]).toBeCloseTo(-1, 12);
    expect(r[2]).toBeCloseTo(0, 12);
  });

  it('conjugate is the inverse', () => {
    const q = about([1, 2, 3], 1.1);
    expectQuatClose(multiply(q, conjugate(q)), IDENTITY);
  });

  it('angleBetween treats q and -q as the same rotation', () => {
    const q = about([0, 0, 1], 0.4);
    expect(angleBetween(q, [-q[0], -q[1], -q[2], -q[3]])).toBeLessThan(1e-6);
  });

  it('slerps at constant angular rate along the shorter arc', () => {
    const a = about([0, 1, 0], 0.2);
    const b = about([0, 1, 0], 1.4);
    expectQuatClose(slerp(a, b, 0.25), about([0, 1, 0], 0.5));
    const bFlipped: Quat = [-b[0], -b[1], -b[2], -b[3]];
    expectQuatClose(slerp(a, bFlipped, 0.5), about([0, 1, 0], 0.8));
    expectQuatClose(slerp(a, a, 0.7), a);
  });

  it('rotation vectors round-trip, including angles near π', () => {
    for (const angle of [0, 1e-9, 0.3, 2, Math.PI - 1e-6]) {
      const q = about([0.3, -0.5, 0.8], angle);
      expectQuatClose(fromRotationVector(toRotationVector(q)), q);
      expect(Math.hypot(...toRotationVector(q))).toBeCloseTo(angle, 6);
    }
  });

  it('integrates angular velocity: 1 rad/s about Z for 0.5 s', () => {
    expectQuatClose(fromAngularVelocity([0, 0, 1], 0.5), about([0, 0, 1], 0.5));
  });
});
