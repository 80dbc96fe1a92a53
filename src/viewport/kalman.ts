import { KinematicFilter, type KinematicNoise, type KinematicOrder } from './kinematics';
import type { Pose } from '../model/pose';
import type { Vec3, Quat } from '../model/vectors';
import type { Predictor } from './predictor';
import { conjugate, fromRotationVector, multiply, normalize, toRotationVector } from './quaternion';

/** What the filter believes about the head at the time of its latest sample. */
export interface KinematicState {
  /** Time of the latest sample, seconds. */
  t: number;
  position: Vec3;
  /** m/s */
  velocity: Vec3;
  /** m/s² (zero with the constant-velocity model). */
  acceleration: Vec3;
  orientation: Quat;
  /** World-frame angular velocity, rad/s: the head turns as exp(ω·dt)·q. */
  angularVelocity: Vec3;
  /** rad/s² (zero with the constant-velocity model). */
  angularAcceleration: Vec3;
}

export interface KalmanOptions {
  /** 2 = nearly constant velocity, 3 = nearly constant acceleration (default 2). */
  positionOrder?: KinematicOrder;
  /** Same for the orientation (default 2). */
  orientationOrder?: KinematicOrder;
  /** Position noise in metres (defaults in {@link DEFAULT_POSITION_NOISE}). */
  positionNoise?: Partial<KinematicNoise>;
  /** Orientation noise in radians (defaults in {@link DEFAULT_ORIENTATION_NOISE}). */
  orientationNoise?: Partial<KinematicNoise>;
  /** A gap longer than this (tracking lost, paused replay) restarts the filter (default 1000 ms). */
  resetAfterGapMs?: number;
}

/**
 * Noise levels chosen by a small sweep on all pose traces in ../shared/data/pose (mean error at
 * 100/300/500 ms; docs/results.md). The optimum is flat; what matters is the ratio of process to
 * measurement noise, i.e. how much the filter smooths.
 */
export const DEFAULT_POSITION_NOISE: KinematicNoise = {
  processDensity: 3,
  measurementSigma: 0.005,
  initialSigmas: [1, 5],
};

export const DEFAULT_ORIENTATION_NOISE: KinematicNoise = {
  processDensity: 30,
  measurementSigma: 0.01,
  initialSigmas: [2, 20],
};

/**
 * Kalman filter on head pose, extrapolating its estimated motion over the horizon.
 *
 * Position: three independent axes of a linear kinematic filter (see {@link KinematicFilter}).
 *
 * Orientation: an error-state (multiplicative) filter. The nominal state is a unit quaternion q̂
 * and a world-frame angular velocity ω̂ (and acceleration α̂ with order 3); the filter estimates
 * the small world-frame rotation error δθ with q = exp(δθ)·q̂ together with the rate errors. Each
 * sample:
 * 1. propagate the nominal state, q̂ ← exp(ω̂·dt + α̂·dt²/2)·q̂, and the error covariance;
 * 2. innovation = rotationVector(q_measured · q̂⁻¹), a 3-vector in the tangent space at q̂, so the
 *    filter never adds or normalises quaternions and has no sign ambiguity (q and −q give the
 *    same innovation);
 * 3. inject the corrected error, q̂ ← exp(δθ)·q̂, ω̂ ← ω̂ + δω, and reset δθ to zero.
 * The error's rotation by the nominal motion over one step (about |ω|·dt ≲ 0.05 rad at 60 Hz) is
 * neglected, which keeps the three axes decoupled with one shared covariance.
 */
export class KalmanPredictor implements Predictor {
  private readonly position: KinematicFilter;
  private readonly rotation: KinematicFilter;
  private readonly resetAfterGap: number;
  private q: Quat = [0, 0, 0, 1];
  private t: number | undefined;

  constructor(options: KalmanOptions = {}) {
    this.position = new KinematicFilter(options.positionOrder ?? 2, { ...DEFAULT_POSITION_NOISE, ...options.positionNoise });
    this.rotation = new KinematicFilter(options.orientationOrder ?? 2, { ...DEFAULT_ORIENTATION_NOISE, ...options.orientationNoise });
    const gap = options.resetAfterGapMs ?? 1000;
    if (!(gap > 0)) throw new Error(`KalmanPredictor: resetAfterGapMs must be > 0, got ${gap}`);
    this.resetAfterGap = gap / 1000;
  }

  observe(pose: Pose): void {
    if (this.t !== undefined && !(pose.t > this.t)) {
      throw new Error(`KalmanPredictor: pose time ${pose.t} s is not after ${this.t} s`);
    }
    const q = normalize(pose.orientation);
    if (this.t === undefined || pose.t - this.t > this.resetAfterGap) {
      this.position.reset(pose.position);
      this.rotation.reset([0, 0, 0]);
      this.q = q;
      this.t = pose.t;
      return;
    }
    const dt = pose.t - this.t;
    this.t = pose.t;

    this.position.predict(dt);
    const p = this.position.x[0];
    this.position.update([pose.position[0] - p[0], pose.position[1] - p[1], pose.position[2] - p[2]]);

    // Rotation: the filter's value row is the error δθ, zero before propagation; after predict() it
    // holds the nominal rotation over dt, which is moved into q̂ and zeroed again.
    this.rotation.predict(dt);
    this.q = normalize(multiply(fromRotationVector(this.rotation.x[0]), this.q));
    this.rotation.x[0] = [0, 0, 0];
    this.rotation.update(toRotationVector(multiply(q, conjugate(this.q))));
    this.q = normalize(multiply(fromRotationVector(this.rotation.x[0]), this.q));
    this.rotation.x[0] = [0, 0, 0];
  }

  /** The filtered state at the latest sample; throws before the first. */
  state(): KinematicState {
    if (this.t === undefined) throw new Error('KalmanPredictor: state() before any observe()');
    const zero: Vec3 = [0, 0, 0];
    const copy = (v: readonly number[]): Vec3 => [v[0], v[1], v[2]];
    return {
      t: this.t,
      position: copy(this.position.x[0]),
      velocity: copy(this.position.x[1]),
      acceleration: this.position.order === 3 ? copy(this.position.x[2]) : zero,
      orientation: this.q,
      angularVelocity: copy(this.rotation.x[1]),
      angularAcceleration: this.rotation.order === 3 ? copy(this.rotation.x[2]) : zero,
    };
  }

  predict(horizonMs: number): Pose {
    if (this.t === undefined) throw new Error('KalmanPredictor: predict() before any observe()');
    return extrapolate(this.state(), horizonMs / 1000);
  }
}

/** Pose `h` seconds after the state under the filter's own model: p + v·h + a·h²/2, exp(ω·h + α·h²/2)·q. */
export function extrapolate(s: KinematicState, h: number): Pose {
  const turn: [number, number, number] = [0, 0, 0];
  const at: [number, number, number] = [0, 0, 0];
  for (let k = 0; k < 3; k++) {
    at[k] = s.position[k] + s.velocity[k] * h + (s.acceleration[k] * h * h) / 2;
    turn[k] = s.angularVelocity[k] * h + (s.angularAcceleration[k] * h * h) / 2;
  }
  return { t: s.t + h, position: at, orientation: normalize(multiply(fromRotationVector(turn), s.orientation)) };
}
