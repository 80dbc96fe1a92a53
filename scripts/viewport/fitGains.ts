/**
 * Fitting the gains of the horizon-gain predictor (src/viewport/horizonGains.ts) on recorded head
 * motion; `npx tsx scripts/viewport/evaluate.ts --fit` prints them for src/viewport/defaultGains.ts.
 */
import type { Pose } from '../../src/model/pose';
import { type HorizonGain, motionFeatures } from '../../src/viewport/horizonGains';
import { KalmanPredictor, type KalmanOptions } from '../../src/viewport/kalman';
import { conjugate, multiply, toRotationVector } from '../../src/viewport/quaternion';
import { poseAt } from './predictionError';

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
