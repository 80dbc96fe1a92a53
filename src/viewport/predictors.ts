/**
 * The head-pose predictors the viewport model can run: the baselines every other predictor must
 * beat (last value, constant velocity) and the default one the player runs ({@link
 * createDefaultPredictor}: the Kalman filter with fitted horizon gains).
 */
import type { Pose } from '../model/pose';
import type { Vec3 } from '../model/vectors';
import { DEFAULT_HORIZON_GAINS } from './defaultGains';
import type { Predictor } from './predictor';
import { HorizonGainPredictor } from './horizonGains';
import { conjugate, fromAngularVelocity, multiply, normalize, toRotationVector } from './quaternion';

/** Predicts that the head stays where it was last seen. The baseline every other predictor must beat. */
export class LastValuePredictor implements Predictor {
  private last: Pose | undefined;

  observe(pose: Pose): void {
    this.last = pose;
  }

  predict(horizonMs: number): Pose {
    if (!this.last) throw new Error('LastValuePredictor: predict() before any observe()');
    return { ...this.last, t: this.last.t + horizonMs / 1000 };
  }
}

/**
 * Constant linear and angular velocity, each estimated by least squares over the samples of the last
 * `windowMs` (a regression rather than a two-sample difference, so sensor jitter averages out).
 *
 * Both fits are anchored at the latest sample (regression through the origin in time offsets
 * τ = tᵢ − t_last), so the prediction starts from the freshest measurement:
 * - position: v = Σ τᵢ (pᵢ − p_last) / Σ τᵢ², predicted p_last + v·h;
 * - orientation: rᵢ = rotationVector(qᵢ · q_last⁻¹) is the world-frame rotation between the samples,
 *   ω = Σ τᵢ rᵢ / Σ τᵢ², predicted exp(ω·h) · q_last.
 * Both are exact on motion with truly constant velocities.
 */
export class ConstantVelocityPredictor implements Predictor {
  private readonly window: Pose[] = [];

  readonly windowMs: number;
  readonly orientationDecayMs: number;
  readonly positionDecayMs: number;

  /**
   * @param options.windowMs regression window (default 100 ms).
   * @param options.orientationDecayMs / options.positionDecayMs if finite, the extrapolated velocity
   *   decays exponentially with this time constant (heads rarely keep turning for long), so the
   *   motion applied over a horizon h is v·T·(1 − e^(−h/T)) instead of v·h. The default, `Infinity`,
   *   is pure constant velocity.
   */
  constructor(options: { windowMs?: number; orientationDecayMs?: number; positionDecayMs?: number } = {}) {
    this.windowMs = options.windowMs ?? 100;
    this.orientationDecayMs = options.orientationDecayMs ?? Infinity;
    this.positionDecayMs = options.positionDecayMs ?? Infinity;
    const durations = {
      windowMs: this.windowMs,
      orientationDecayMs: this.orientationDecayMs,
      positionDecayMs: this.positionDecayMs,
    };
    for (const [name, value] of Object.entries(durations)) {
      if (!(value > 0)) throw new Error(`ConstantVelocityPredictor: ${name} must be > 0, got ${value}`);
    }
  }

  observe(pose: Pose): void {
    const last = this.window[this.window.length - 1];
    if (last && pose.t <= last.t) {
      throw new Error(`ConstantVelocityPredictor: pose time ${pose.t} s is not after ${last.t} s`);
    }
    this.window.push(pose);
    const oldest = pose.t - this.windowMs / 1000;
    // Keep at least two samples so a velocity exists even across a gap longer than the window.
    while (this.window.length > 2 && this.window[0].t < oldest) this.window.shift();
  }

  predict(horizonMs: number): Pose {
    const last = this.window[this.window.length - 1];
    if (!last) throw new Error('ConstantVelocityPredictor: predict() before any observe()');
    const h = horizonMs / 1000;
    const inverseLast = conjugate(last.orientation);
    let tt = 0;
    const v = [0, 0, 0];
    const w = [0, 0, 0];
    for (const p of this.window) {
      const tau = p.t - last.t;
      if (tau === 0) continue;
      tt += tau * tau;
      const r = toRotationVector(multiply(p.orientation, inverseLast));
      for (let k = 0; k < 3; k++) {
        v[k] += tau * (p.position[k] - last.position[k]);
        w[k] += tau * r[k];
      }
    }
    if (tt === 0) return { ...last, t: last.t + h };
    const moving = effectiveSeconds(horizonMs, this.positionDecayMs);
    const turning = effectiveSeconds(horizonMs, this.orientationDecayMs);
    const velocity: Vec3 = [v[0] / tt, v[1] / tt, v[2] / tt];
    const omega: Vec3 = [w[0] / tt, w[1] / tt, w[2] / tt];
    return {
      t: last.t + h,
      position: [
        last.position[0] + velocity[0] * moving,
        last.position[1] + velocity[1] * moving,
        last.position[2] + velocity[2] * moving,
      ],
      orientation: normalize(multiply(fromAngularVelocity(omega, turning), last.orientation)),
    };
  }
}

/** Seconds of full-speed motion equivalent to a horizon of `horizonMs` under exponential decay. */
function effectiveSeconds(horizonMs: number, decayMs: number): number {
  if (!Number.isFinite(decayMs)) return horizonMs / 1000;
  return (decayMs * (1 - Math.exp(-horizonMs / decayMs))) / 1000;
}

/**
 * The predictor the player should use: a constant-velocity Kalman filter whose extrapolation is
 * shrunk per horizon by gains fitted on real head motion ({@link HorizonGainPredictor},
 * {@link DEFAULT_HORIZON_GAINS}). The best of all predictors on both datasets at every horizon
 * measured (docs/results.md, "Viewport prediction").
 */
export function createDefaultPredictor(): Predictor {
  return new HorizonGainPredictor(DEFAULT_HORIZON_GAINS);
}
