import { describe, expect, it } from 'vitest';
import type { Pose } from '../model/pose';
import { ConstantVelocityPredictor, LastValuePredictor } from './predictors';
import { angleBetween, fromAngularVelocity, multiply } from './quaternion';
import { type Quat } from '../model/vectors';

const START: Quat = [0.1, 0.2, -0.1, Math.sqrt(1 - 0.06)];
const OMEGA: [number, number, number] = [0.4, -1.2, 0.3]; // rad/s
const VELOCITY = [0.5, -0.1, 0.25]; // m/s

/** Synthetic head moving with constant linear and angular velocity, with uneven sample spacing. */
function syntheticPose(t: number): Pose {
  return {
    t,
    position: [1 + VELOCITY[0] * t, 1.6 + VELOCITY[1] * t, -2 + VELOCITY[2] * t],
    orientation: multiply(fromAngularVelocity(OMEGA, t), START),
  };
}

function feed(predictor: { observe(p: Pose): void }, times: number[]): void {
  for (const t of times) predictor.observe(syntheticPose(t));
}

describe('predictors', () => {
  const times = [0, 0.013, 0.031, 0.047, 0.066, 0.08, 0.097, 0.115, 0.128, 0.15];

  it('constant velocity is exact on constant-velocity motion', () => {
    const p = new ConstantVelocityPredictor({ windowMs: 100 });
    feed(p, times);
    for (const horizonMs of [100, 300, 1000]) {
      const guess = p.predict(horizonMs);
      const truth = syntheticPose(0.15 + horizonMs / 1000);
      expect(guess.t).toBeCloseTo(truth.t, 12);
      for (let k = 0; k < 3; k++) expect(guess.position[k]).toBeCloseTo(truth.position[k], 9);
      expect(angleBetween(guess.orientation, truth.orientation)).toBeLessThan(1e-6);
    }
  });

  it('with decay, applies exactly v·T·(1 − e^(−h/T)) of the constant-velocity motion', () => {
    const p = new ConstantVelocityPredictor({ windowMs: 100, orientationDecayMs: 300, positionDecayMs: 600 });
    feed(p, times);
    const guess = p.predict(400);
    const turned = 0.3 * (1 - Math.exp(-400 / 300));
    const moved = 0.6 * (1 - Math.exp(-400 / 600));
    const now = syntheticPose(0.15);
    for (let k = 0; k < 3; k++) expect(guess.position[k]).toBeCloseTo(now.position[k] + VELOCITY[k] * moved, 9);
    expect(angleBetween(guess.orientation, syntheticPose(0.15 + turned).orientation)).toBeLessThan(1e-6);
  });

  it('last value holds the latest pose and is off by exactly the motion', () => {
    const p = new LastValuePredictor();
    feed(p, times);
    const guess = p.predict(200);
    expect(guess.position).toEqual(syntheticPose(0.15).position);
    expect(angleBetween(guess.orientation, syntheticPose(0.35).orientation)).toBeCloseTo(0.2 * Math.hypot(...OMEGA), 9);
  });

  it('rejects use before data and out-of-order samples', () => {
    expect(() => new LastValuePredictor().predict(100)).toThrow(/before any observe/);
    expect(() => new ConstantVelocityPredictor().predict(100)).toThrow(/before any observe/);
    expect(() => new ConstantVelocityPredictor({ windowMs: 0 })).toThrow(/windowMs must be > 0/);
    expect(() => new ConstantVelocityPredictor({ orientationDecayMs: -1 })).toThrow(/orientationDecayMs/);
    const p = new ConstantVelocityPredictor();
    p.observe(syntheticPose(1));
    expect(() => p.observe(syntheticPose(1))).toThrow(/not after/);
    // One sample: no velocity yet, so it falls back to holding the pose.
    expect(p.predict(100).position).toEqual(syntheticPose(1).position);
  });
});
