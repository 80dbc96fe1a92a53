import { poseAt } from './evaluate';
import { KalmanPredictor, type KalmanOptions, type KinematicState } from './kalman';
import type { Pose, Vec3 } from './pose';
import type { Predictor } from './predictors';
import { conjugate, fromRotationVector, multiply, normalize, toRotationVector, type Quat } from './quaternion';

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

/** The kinematic terms the gains weight: velocity × h, angular velocity × h, and the levelling rotation. */
function motionFeatures(s: KinematicState, h: number): { move: Vec3; turn: Vec3; level: Vec3 } {
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

/**
 * Gains per horizon fitted on recorded traces: replays each trace through the constant-velocity
 * Kalman filter and, at every sample, relates the true displacement at t + h (position difference;
 * rotation vector of q(t+h)·q̂⁻¹) to the motion terms of {@link HorizonGainPredictor}.
 *
 * The fit minimises the mean Euclidean error — the very metric the predictor is judged by — not
 * the squared error: tracking glitches (HoloLens relocalisation jumps, gaps) produce a few huge
 * velocity estimates that would otherwise drag least-squares gains far down. Solved by iteratively
 * reweighted least squares (weights 1/‖residual‖).
 */
export function fitHorizonGains(
  traces: readonly (readonly Pose[])[],
  horizonsMs: readonly number[],
  filterOptions: Omit<KalmanOptions, 'positionOrder' | 'orientationOrder'> = {},
): HorizonGain[] {
  // Position rows: features [horizontal, vertical]; orientation rows: [yaw, tilt, level].
  const position = horizonsMs.map(() => new RobustRegression([1, 1]));
  const orientation = horizonsMs.map(() => new RobustRegression([1, 1, 0]));
  for (const trace of traces) {
    const filter = new KalmanPredictor({ ...filterOptions, positionOrder: 2, orientationOrder: 2 });
    for (let i = 0; i < trace.length; i++) {
      filter.observe(trace[i]);
      const s = filter.state();
      horizonsMs.forEach((horizonMs, k) => {
        const truth = poseAt(trace, trace[i].t + horizonMs / 1000, i + 1);
        if (!truth) return;
        const f = motionFeatures(s, horizonMs / 1000);
        const moved = [0, 1, 2].map((j) => truth.position[j] - s.position[j]);
        const turned = toRotationVector(multiply(truth.orientation, conjugate(s.orientation)));
        position[k].add([
          [f.move[0], 0, moved[0]],
          [0, f.move[1], moved[1]],
          [f.move[2], 0, moved[2]],
        ]);
        orientation[k].add([
          [0, f.turn[0], f.level[0], turned[0]],
          [f.turn[1], 0, 0, turned[1]],
          [0, f.turn[2], f.level[2], turned[2]],
        ]);
      });
    }
  }
  return horizonsMs.map((horizonMs, k) => {
    const [horizontal, vertical] = position[k].fit(`position at ${horizonMs} ms`);
    const [yaw, tilt, level] = orientation[k].fit(`orientation at ${horizonMs} ms`);
    return { horizonMs, position: { horizontal, vertical }, orientation: { yaw, tilt, level } };
  });
}

/**
 * Linear model y = A·g over samples of 3 rows each (one per axis), fitted to minimise the sum of
 * per-sample Euclidean residual norms by iteratively reweighted least squares. A vanishing ridge
 * pulls each gain toward its `neutral` value (pure kinematics), which decides only gains whose
 * motion never occurs in the data (e.g. no vertical motion at all) instead of leaving them singular.
 */
class RobustRegression {
  private readonly rows: number[] = [];
  private readonly parameters: number;
  private samples = 0;

  constructor(private readonly neutral: readonly number[]) {
    this.parameters = neutral.length;
  }

  /** One sample: three rows of `parameters` features followed by the target. */
  add(rows: readonly (readonly number[])[]): void {
    for (const row of rows) this.rows.push(...row);
    this.samples++;
  }

  fit(what: string): number[] {
    const p = this.parameters;
    const width = p + 1;
    if (this.samples === 0) throw new Error(`fitHorizonGains: no samples to fit ${what}`);
    const weights = new Float64Array(this.samples).fill(1);
    let g = new Array<number>(p).fill(0);
    for (let iteration = 0; iteration < 30; iteration++) {
      const ata = new Array<number>(p * p).fill(0);
      const aty = new Array<number>(p).fill(0);
      for (let s = 0; s < this.samples; s++) {
        for (let r = 0; r < 3; r++) {
          const o = (s * 3 + r) * width;
          for (let a = 0; a < p; a++) {
            const fa = this.rows[o + a] * weights[s];
            if (fa === 0) continue;
            aty[a] += fa * this.rows[o + p];
            for (let b = 0; b < p; b++) ata[a * p + b] += fa * this.rows[o + b];
          }
        }
      }
      let trace = 0;
      for (let a = 0; a < p; a++) trace += ata[a * p + a];
      if (!(trace > 0)) throw new Error(`fitHorizonGains: no motion to fit ${what}`);
      const ridge = (1e-9 * trace) / p;
      for (let a = 0; a < p; a++) {
        ata[a * p + a] += ridge;
        aty[a] += ridge * this.neutral[a];
      }
      g = solve(ata, aty, p, what);
      for (let s = 0; s < this.samples; s++) {
        let r2 = 0;
        for (let r = 0; r < 3; r++) {
          const o = (s * 3 + r) * width;
          let e = this.rows[o + p];
          for (let a = 0; a < p; a++) e -= g[a] * this.rows[o + a];
          r2 += e * e;
        }
        // The floor keeps near-exact samples from taking all the weight.
        weights[s] = 1 / Math.max(Math.sqrt(r2), 1e-4);
      }
    }
    return g;
  }
}

/** Solves the p×p system by Gaussian elimination with partial pivoting. */
function solve(matrix: number[], rhs: number[], p: number, what: string): number[] {
  const m = matrix.slice();
  const x = rhs.slice();
  for (let c = 0; c < p; c++) {
    let pivot = c;
    for (let r = c + 1; r < p; r++) if (Math.abs(m[r * p + c]) > Math.abs(m[pivot * p + c])) pivot = r;
    if (!(Math.abs(m[pivot * p + c]) > 1e-300)) throw new Error(`fitHorizonGains: no motion to fit ${what} (singular system)`);
    for (let k = 0; k < p; k++) [m[c * p + k], m[pivot * p + k]] = [m[pivot * p + k], m[c * p + k]];
    [x[c], x[pivot]] = [x[pivot], x[c]];
    for (let r = c + 1; r < p; r++) {
      const f = m[r * p + c] / m[c * p + c];
      for (let k = c; k < p; k++) m[r * p + k] -= f * m[c * p + k];
      x[r] -= f * x[c];
    }
  }
  for (let r = p - 1; r >= 0; r--) {
    for (let k = r + 1; k < p; k++) x[r] -= m[r * p + k] * x[k];
    x[r] /= m[r * p + r];
  }
  return x;
}
