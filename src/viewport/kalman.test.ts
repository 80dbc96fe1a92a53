import { describe, expect, it } from 'vitest';
import { KalmanPredictor } from './kalman';
import type { Pose } from '../model/pose';
import { ConstantVelocityPredictor } from './predictors';
import { angleBetween, fromAngularVelocity, fromRotationVector, multiply } from './quaternion';
import { type Quat } from '../model/vectors';

const START: Quat = [0.1, 0.2, -0.1, Math.sqrt(1 - 0.06)];
const OMEGA: [number, number, number] = [0.4, -1.2, 0.3]; // rad/s
const VELOCITY = [0.5, -0.1, 0.25]; // m/s
const ACCEL = [0.8, 0.2, -0.5]; // m/s²
const AXIS = [0.6, 0.8, 0]; // fixed turning axis for the angular-acceleration case

/** Uneven sampling around 60 Hz (HoloLens-like jitter), deterministic. */
function sampleTimes(seconds: number): number[] {
  const times: number[] = [];
  for (let t = 0, i = 0; t < seconds; i++) {
    times.push(t);
    t += 1 / 60 + 0.004 * Math.sin(i * 1.7);
  }
  return times;
}

/** Deterministic pseudo-random standard normal numbers (Box–Muller on a linear congruential generator). */
function gaussian(seed: number): () => number {
  let s = seed;
  const uniform = () => ((s = (s * 1664525 + 1013904223) % 4294967296) + 0.5) / 4294967296;
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

const constantVelocity = (t: number): Pose => ({
  t,
  position: [1 + VELOCITY[0] * t, 1.6 + VELOCITY[1] * t, -2 + VELOCITY[2] * t],
  orientation: multiply(fromAngularVelocity(OMEGA, t), START),
});

const constantAcceleration = (t: number): Pose => {
  const angle = 0.3 * t + 0.9 * t * t; // ω0 = 0.3 rad/s, α = 1.8 rad/s² about a fixed axis
  return {
    t,
    position: [0, 1, 2].map((k) => VELOCITY[k] * t + (ACCEL[k] * t * t) / 2) as [number, number, number],
    orientation: multiply(fromRotationVector([AXIS[0] * angle, AXIS[1] * angle, AXIS[2] * angle]), START),
  };
};

function errors(guess: Pose, truth: Pose): { metres: number; radians: number } {
  return {
    metres: Math.hypot(...[0, 1, 2].map((k) => guess.position[k] - truth.position[k])),
    radians: angleBetween(guess.orientation, truth.orientation),
  };
}

describe('KalmanPredictor', () => {
  it('converges to exact extrapolation on noise-free constant-velocity motion', () => {
    const kf = new KalmanPredictor();
    const times = sampleTimes(3);
    for (const t of times) kf.observe(constantVelocity(t));
    const last = times[times.length - 1];
    for (const horizonMs of [100, 500, 1000]) {
      const e = errors(kf.predict(horizonMs), constantVelocity(last + horizonMs / 1000));
      expect(e.metres).toBeLessThan(1e-6);
      expect(e.radians).toBeLessThan(1e-6);
    }
    const s = kf.state();
    for (let k = 0; k < 3; k++) {
      expect(s.velocity[k]).toBeCloseTo(VELOCITY[k], 6);
      expect(s.angularVelocity[k]).toBeCloseTo(OMEGA[k], 6);
    }
  });

  it('with the constant-acceleration model, is exact on constant (angular) acceleration', () => {
    const kf = new KalmanPredictor({ positionOrder: 3, orientationOrder: 3 });
    const cv = new KalmanPredictor();
    const times = sampleTimes(4);
    for (const t of times) {
      kf.observe(constantAcceleration(t));
      cv.observe(constantAcceleration(t));
    }
    const truth = constantAcceleration(times[times.length - 1] + 0.5);
    const e = errors(kf.predict(500), truth);
    expect(e.metres).toBeLessThan(1e-5);
    expect(e.radians).toBeLessThan(1e-5);
    // The constant-velocity model misses the a·h²/2 term (0.1 m and 0.225 rad here).
    expect(errors(cv.predict(500), truth).metres).toBeGreaterThan(0.05);
  });

  it('is unaffected by the quaternion sign of the measurements (q and −q are one rotation)', () => {
    const kf = new KalmanPredictor();
    const times = sampleTimes(2);
    times.forEach((t, i) => {
      const p = constantVelocity(t);
      const q = p.orientation;
      kf.observe(i % 2 ? { ...p, orientation: [-q[0], -q[1], -q[2], -q[3]] } : p);
    });
    const last = times[times.length - 1];
    expect(errors(kf.predict(300), constantVelocity(last + 0.3)).radians).toBeLessThan(1e-6);
  });

  it('smooths measurement noise: better than a short regression window, nearly exact when tuned to the motion', () => {
    const noise = gaussian(7);
    const kf = new KalmanPredictor();
    // A filter told the truth: hardly any change of velocity, 1 cm / 0.01 rad measurement noise.
    const tuned = new KalmanPredictor({
      positionNoise: { processDensity: 1e-3, measurementSigma: 0.01 },
      orientationNoise: { processDensity: 1e-3, measurementSigma: 0.01 },
    });
    const cv = new ConstantVelocityPredictor({ windowMs: 50 });
    let kfError = 0;
    let tunedError = 0;
    let tunedMetres = 0;
    let cvError = 0;
    let n = 0;
    const times = sampleTimes(10);
    for (const t of times) {
      const clean = constantVelocity(t);
      // 5 mm and about 0.6° of tracking noise per sample.
      const noisy: Pose = {
        t,
        position: [0, 1, 2].map((k) => clean.position[k] + 0.005 * noise()) as [number, number, number],
        orientation: multiply(fromRotationVector([0.006 * noise(), 0.006 * noise(), 0.006 * noise()]), clean.orientation),
      };
      kf.observe(noisy);
      tuned.observe(noisy);
      cv.observe(noisy);
      if (t < 1) continue; // let both settle
      const truth = constantVelocity(t + 0.3);
      const a = errors(kf.predict(300), truth);
      const b = errors(cv.predict(300), truth);
      const c = errors(tuned.predict(300), truth);
      kfError += a.radians;
      cvError += b.radians;
      tunedError += c.radians;
      tunedMetres += c.metres;
      n++;
    }
    // The default filter is tuned for agile heads, so it follows the noise a little; still better.
    expect(kfError / n).toBeLessThan(cvError / n);
    // Below the per-sample noise (about 0.6° and 8.7 mm in 3D) even 300 ms ahead.
    expect((tunedError / n) * (180 / Math.PI)).toBeLessThan(0.3);
    expect(tunedMetres / n).toBeLessThan(0.005);
  });

  it('restarts after a tracking gap instead of extrapolating across it', () => {
    const kf = new KalmanPredictor({ resetAfterGapMs: 500 });
    for (const t of sampleTimes(1)) kf.observe(constantVelocity(t));
    const still: Pose = { t: 5, position: [0, 1.6, 0], orientation: START };
    kf.observe(still);
    expect(kf.state().velocity).toEqual([0, 0, 0]);
    expect(kf.predict(200).position).toEqual(still.position);
  });

  it('rejects bad use and bad settings', () => {
    expect(() => new KalmanPredictor().predict(100)).toThrow(/before any observe/);
    expect(() => new KalmanPredictor({ positionNoise: { processDensity: 0 } })).toThrow(/processDensity must be a positive number/);
    expect(() => new KalmanPredictor({ orientationNoise: { measurementSigma: NaN } })).toThrow(/measurementSigma/);
    expect(() => new KalmanPredictor({ positionOrder: 4 as 2 })).toThrow(/order must be 2 or 3/);
    expect(() => new KalmanPredictor({ resetAfterGapMs: 0 })).toThrow(/resetAfterGapMs/);
    const kf = new KalmanPredictor();
    kf.observe(constantVelocity(1));
    expect(() => kf.observe(constantVelocity(1))).toThrow(/not after/);
  });
});
