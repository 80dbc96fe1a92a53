/**
 * The predictor the player runs by default: a Kalman filter whose extrapolation is weighted per
 * horizon by gains learnt from recorded head motion (the gains are data, defaultGains.ts; fitting
 * them is experiment tooling, scripts/viewport/fitGains.ts).
 */
import { KalmanPredictor, type KalmanOptions, type KinematicState } from './kalman';
import type { Pose } from '../model/pose';
import type { Vec3, Quat } from '../model/vectors';
import type { Predictor } from './predictor';
import { conjugate, fromRotationVector, multiply, normalize } from './quaternion';

/**
 * How much of each kind of motion to extrapolate at one horizon. Heads move differently along
 * different axes: walking carries on horizontally but bobs vertically; turning the head (yaw)
 * carries on longer than nodding (pitch/roll), and a tilted head tends to come back to level.
 */
export interface HorizonGain {
  horizonMs: number;
  position: {
    /** Fraction of the horizontal velocity × h applied (x, z). */
    horizontal: number;
    /** Fraction of the vertical velocity × h applied (y). */
    vertical: number;
  };
  orientation: {
    /** Fraction of the yaw rate (world y component of ω) × h applied. */
    yaw: number;
    /** Fraction of the pitch/roll rate (world x, z components of ω) × h applied. */
    tilt: number;
    /** Fraction of the pitch that returns toward a level gaze over h. */
    level: number;
  };
}

/**
 * A constant-velocity Kalman filter whose extrapolation is weighted per horizon by gains fitted on
 * recorded head motion:
 *   p(h) = p + [g_hor·v_x, g_ver·v_y, g_hor·v_z]·h
 *   q(h) = exp(g_yaw·ω_y·h ŷ + g_tilt·(ω_x x̂ + ω_z ẑ)·h + g_level·ℓ)·q
 * where ℓ is the rotation vector that would level the gaze (turn the forward direction back to
 * the horizon about the horizontal axis).
 *
 * Why: a kinematic model extrapolates the current motion forever, but heads turn in short bursts —
 * the longer the horizon, the less of the current velocity survives — and the three kinds of
 * motion above fade at different rates. The fitted gains learn that from data; they are the best
 * linear predictor given the filter's state (in mean error). Gains between fitted horizons are
 * interpolated linearly, toward pure kinematics (gain 1, no levelling) below the first one; past
 * the last one the extrapolated displacement is held (heads do not keep turning for seconds).
 */
export class HorizonGainPredictor implements Predictor {
  private readonly filter: KalmanPredictor;
  private readonly gains: readonly HorizonGain[];

  constructor(gains: readonly HorizonGain[], filterOptions: Omit<KalmanOptions, 'positionOrder' | 'orientationOrder'> = {}) {
    if (gains.length === 0) throw new Error('HorizonGainPredictor: no gains');
    for (let i = 0; i < gains.length; i++) {
      const g = gains[i];
      const values = [g.horizonMs, ...Object.values(g.position), ...Object.values(g.orientation)];
      if (!values.every(Number.isFinite) || !(g.horizonMs > 0) || (i > 0 && !(g.horizonMs > gains[i - 1].horizonMs))) {
        throw new Error(`HorizonGainPredictor: gain ${i} is not finite or horizons do not increase (${JSON.stringify(g)})`);
      }
    }
    this.gains = gains;
    this.filter = new KalmanPredictor({ ...filterOptions, positionOrder: 2, orientationOrder: 2 });
  }

  observe(pose: Pose): void {
    this.filter.observe(pose);
  }

  predict(horizonMs: number): Pose {
    const s = this.filter.state();
    const g = gainsAt(this.gains, horizonMs);
    const f = motionFeatures(s, (horizonMs / 1000) * g.scale);
    const p = g.gain.position;
    const o = g.gain.orientation;
    const position: Vec3 = [
      s.position[0] + p.horizontal * f.move[0],
      s.position[1] + p.vertical * f.move[1],
      s.position[2] + p.horizontal * f.move[2],
    ];
    const turn: Vec3 = [
      o.tilt * f.turn[0] + o.level * f.level[0],
      o.yaw * f.turn[1],
      o.tilt * f.turn[2] + o.level * f.level[2],
    ];
    return { t: s.t + horizonMs / 1000, position, orientation: normalize(multiply(fromRotationVector(turn), s.orientation)) };
  }
}

/**
 * The kinematic terms the gains weight: velocity × h, angular velocity × h, and the levelling
 * rotation (also what the gain fitting in scripts/viewport/ relates the true motion to).
 */
export function motionFeatures(s: KinematicState, h: number): { move: Vec3; turn: Vec3; level: Vec3 } {
  return {
    move: [s.velocity[0] * h, s.velocity[1] * h, s.velocity[2] * h],
    turn: [s.angularVelocity[0] * h, s.angularVelocity[1] * h, s.angularVelocity[2] * h],
    level: levellingRotation(s.orientation),
  };
}

/**
 * World-frame rotation vector that turns the gaze (local −z) back to the horizon about the
 * horizontal axis perpendicular to it: angle −pitch about forward × up. Zero when the gaze is
 * level or (undefined direction) vertical.
 */
export function levellingRotation(q: Quat): Vec3 {
  const r = multiply(multiply(q, [0, 0, -1, 0]), conjugate(q));
  const f = [r[0], r[1], r[2]];
  // forward × up = (−f_z, 0, f_x); its length is the horizontal part of the gaze.
  const horizontal = Math.hypot(f[0], f[2]);
  if (horizontal < 1e-6) return [0, 0, 0];
  const pitch = Math.atan2(f[1], horizontal);
  return [(-pitch * -f[2]) / horizontal, 0, (-pitch * f[0]) / horizontal];
}

const PURE_KINEMATICS: HorizonGain = {
  horizonMs: 0,
  position: { horizontal: 1, vertical: 1 },
  orientation: { yaw: 1, tilt: 1, level: 0 },
};

/**
 * Gains at `horizonMs`, interpolated; `scale` < 1 past the last fitted horizon shortens the
 * extrapolation so the displacement stays what it was there.
 */
function gainsAt(gains: readonly HorizonGain[], horizonMs: number): { gain: HorizonGain; scale: number } {
  const last = gains[gains.length - 1];
  if (horizonMs >= last.horizonMs) return { gain: last, scale: horizonMs > 0 ? last.horizonMs / horizonMs : 1 };
  const i = gains.findIndex((g) => g.horizonMs > horizonMs);
  const a = i === 0 ? PURE_KINEMATICS : gains[i - 1];
  const b = gains[i];
  const s = Math.max(0, (horizonMs - a.horizonMs) / (b.horizonMs - a.horizonMs));
  const mix = (x: number, y: number) => x + s * (y - x);
  return {
    gain: {
      horizonMs,
      position: { horizontal: mix(a.position.horizontal, b.position.horizontal), vertical: mix(a.position.vertical, b.position.vertical) },
      orientation: {
        yaw: mix(a.orientation.yaw, b.orientation.yaw),
        tilt: mix(a.orientation.tilt, b.orientation.tilt),
        level: mix(a.orientation.level, b.orientation.level),
      },
    },
    scale: 1,
  };
}
