import { describe, expect, it } from 'vitest';
import { HorizonGainPredictor, levellingRotation, type HorizonGain } from './horizonGains';
import { KalmanPredictor } from './kalman';
import type { Pose } from '../model/pose';
import { angleBetween, fromAngularVelocity, fromRotationVector, multiply } from './quaternion';
import { type Quat } from '../model/vectors';

const START: Quat = [0.05, 0.3, -0.02, Math.sqrt(1 - 0.0929)];
const OMEGA: [number, number, number] = [0.2, -0.9, 0.1];

const cvPose = (t: number): Pose => ({
  t,
  position: [0.4 * t, 1.6 + 0.05 * t, -0.3 * t],
  orientation: multiply(fromAngularVelocity(OMEGA, t), START),
});

const pureKinematics = (horizonMs: number): HorizonGain => ({
  horizonMs,
  position: { horizontal: 1, vertical: 1 },
  orientation: { yaw: 1, tilt: 1, level: 0 },
});

function times(seconds: number, hz = 60): number[] {
  return Array.from({ length: Math.round(seconds * hz) }, (_, i) => i / hz);
}

describe('HorizonGainPredictor', () => {
  it('with unit gains is the Kalman filter itself', () => {
    const gains = new HorizonGainPredictor([pureKinematics(100), pureKinematics(1000)]);
    const kf = new KalmanPredictor();
    for (const t of times(2)) {
      gains.observe(cvPose(t));
      kf.observe(cvPose(t));
    }
    for (const h of [50, 300, 1000]) {
      const a = gains.predict(h);
      const b = kf.predict(h);
      expect(a.t).toBeCloseTo(b.t, 12);
      for (let k = 0; k < 3; k++) expect(a.position[k]).toBeCloseTo(b.position[k], 12);
      expect(angleBetween(a.orientation, b.orientation)).toBeLessThan(1e-9);
    }
  });

  it('applies the gain to each kind of motion, and holds the displacement past the last horizon', () => {
    const half: HorizonGain = { horizonMs: 400, position: { horizontal: 0.5, vertical: 0 }, orientation: { yaw: 0.5, tilt: 0, level: 0 } };
    const p = new HorizonGainPredictor([half]);
    const yawOnly = (t: number): Pose => ({ t, position: [t, 1.6 + t, 0], orientation: fromRotationVector([0, 0.8 * t, 0]) });
    for (const t of times(3)) p.observe(yawOnly(t));
    const now = yawOnly(3 - 1 / 60);
    const at400 = p.predict(400);
    expect(at400.position[0] - now.position[0]).toBeCloseTo(0.2, 5); // half of 1 m/s × 0.4 s
    expect(at400.position[1] - now.position[1]).toBeCloseTo(0, 5); // vertical gain 0
    expect(angleBetween(at400.orientation, now.orientation)).toBeCloseTo(0.16, 5); // half of 0.8 rad/s × 0.4 s
    // At 800 ms the same displacement: past the last fitted horizon nothing more is extrapolated.
    expect(p.predict(800).position[0]).toBeCloseTo(at400.position[0], 9);
    expect(p.predict(800).t).toBeCloseTo(now.t + 0.8, 9);
  });

  it('levelling rotation turns a pitched gaze back to the horizon', () => {
    const lookingDown = fromRotationVector([-0.4, 0, 0]); // pitched down 0.4 rad, facing −z
    const level = levellingRotation(lookingDown);
    expect(level[0]).toBeCloseTo(0.4, 9);
    expect(level[1]).toBe(0);
    expect(level[2]).toBeCloseTo(0, 9);
    expect(angleBetween(multiply(fromRotationVector(level), lookingDown), [0, 0, 0, 1])).toBeLessThan(1e-9);
    // Facing +x and looking up: rotate down about the horizontal axis perpendicular to +x.
    const upEast = multiply(fromRotationVector([0, -Math.PI / 2, 0]), fromRotationVector([0.3, 0, 0]));
    const back = multiply(fromRotationVector(levellingRotation(upEast)), upEast);
    expect(angleBetween(back, fromRotationVector([0, -Math.PI / 2, 0]))).toBeLessThan(1e-9);
    expect(levellingRotation([0, 0, 0, 1]).map((v) => v + 0)).toEqual([0, 0, 0]); // (+0 folds −0)
  });

  it('rejects bad gains', () => {
    expect(() => new HorizonGainPredictor([])).toThrow(/no gains/);
    expect(() => new HorizonGainPredictor([pureKinematics(500), pureKinematics(100)])).toThrow(/do not increase/);
    expect(() => new HorizonGainPredictor([{ ...pureKinematics(100), orientation: { yaw: NaN, tilt: 1, level: 0 } }])).toThrow(/not finite/);
  });
});
