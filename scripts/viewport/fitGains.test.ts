import { describe, expect, it } from 'vitest';
import type { Pose } from '../../src/model/pose';
import type { Quat } from '../../src/model/vectors';
import { fromAngularVelocity, fromRotationVector, multiply } from '../../src/viewport/quaternion';
import { fitHorizonGains } from './fitGains';

const START: Quat = [0.05, 0.3, -0.02, Math.sqrt(1 - 0.0929)];
const OMEGA: [number, number, number] = [0.2, -0.9, 0.1];

const cvPose = (t: number): Pose => ({
  t,
  position: [0.4 * t, 1.6 + 0.05 * t, -0.3 * t],
  orientation: multiply(fromAngularVelocity(OMEGA, t), START),
});

function times(seconds: number, hz = 60): number[] {
  return Array.from({ length: Math.round(seconds * hz) }, (_, i) => i / hz);
}

describe('fitHorizonGains', () => {
  it('recovers unit gains on constant-velocity motion and a known shrinkage on damped motion', () => {
    const cv = fitHorizonGains([times(4).map(cvPose)], [200, 500]);
    expect(cv).toHaveLength(2);
    for (const g of cv) {
      expect(g.position.horizontal).toBeCloseTo(1, 3);
      expect(g.orientation.yaw).toBeCloseTo(1, 2);
    }
    // Bursts of yaw and x motion every 2 s, each decaying with a 0.5 s time constant: over a
    // horizon h the displacement is v·T(1 − e^(−h/T)), so the best gain is near T(1 − e^(−h/T))/h.
    const damped = (t: number): Pose => {
      const burst = Math.floor(t / 2);
      const travelled = 0.5 * burst + 0.5 * (1 - Math.exp(-(t - 2 * burst) / 0.5));
      return { t, position: [travelled, 1.6, 0], orientation: fromRotationVector([0, travelled, 0]) };
    };
    const [fit] = fitHorizonGains([times(20).map(damped)], [500]);
    const expected = (0.5 * (1 - Math.exp(-1))) / 0.5; // 0.63
    expect(fit.position.horizontal).toBeGreaterThan(expected - 0.1);
    expect(fit.position.horizontal).toBeLessThan(expected + 0.1);
    expect(fit.orientation.yaw).toBeGreaterThan(expected - 0.1);
    expect(fit.orientation.yaw).toBeLessThan(expected + 0.1);
  });

  it('refuses to fit without samples', () => {
    expect(() => fitHorizonGains([], [100])).toThrow(/no samples/);
  });
});
