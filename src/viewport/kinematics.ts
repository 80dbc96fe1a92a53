/**
 * The shared core of the Kalman predictors: a kinematic chain (value, rate[, rate of rate]) per
 * axis, driven by continuous white noise on its highest derivative — the "nearly constant
 * velocity" (order 2) or "nearly constant acceleration" (order 3) model — and observed through
 * its value alone.
 *
 * Three axes are filtered at once. They share one model, one noise level and the same sample
 * times, so their covariances are identical: one n×n covariance `P` and one gain vector serve all
 * three, and each axis keeps only its own state column. That makes a 3D filter cost the same as a
 * scalar one and needs no general matrix inversion (the innovation is a scalar per axis).
 */

/** 2: state (value, rate); 3: state (value, rate, acceleration). */
export type KinematicOrder = 2 | 3;

export interface KinematicNoise {
  /**
   * Spectral density of the white noise driving the highest derivative (units²/s³ for order 2,
   * units²/s⁵ for order 3): how fast the motion is allowed to change.
   */
  processDensity: number;
  /** Standard deviation of one measurement (units). */
  measurementSigma: number;
  /** Prior standard deviation of each derivative at the first sample: [rate, acceleration]. */
  initialSigmas: readonly [number, number];
}

export class KinematicFilter {
  readonly order: KinematicOrder;
  private readonly noise: KinematicNoise;
  /** Covariance shared by the three axes (row-major n×n). */
  private readonly P: number[];
  /** State per derivative: `x[d][axis]`, d = 0 value, 1 rate, 2 acceleration. */
  readonly x: [number, number, number][];

  constructor(order: KinematicOrder, noise: KinematicNoise) {
    if (order !== 2 && order !== 3) throw new Error(`KinematicFilter: order must be 2 or 3, got ${order}`);
    for (const [name, v] of [
      ['processDensity', noise.processDensity],
      ['measurementSigma', noise.measurementSigma],
      ['initial rate sigma', noise.initialSigmas[0]],
      ['initial acceleration sigma', noise.initialSigmas[1]],
    ] as const) {
      if (!(v > 0) || !Number.isFinite(v)) throw new Error(`KinematicFilter: ${name} must be a positive number, got ${v}`);
    }
    this.order = order;
    this.noise = noise;
    this.P = new Array<number>(order * order).fill(0);
    this.x = Array.from({ length: order }, () => [0, 0, 0] as [number, number, number]);
  }

  /** Starts from a measured value with unknown (zero-mean) derivatives. */
  reset(value: readonly [number, number, number]): void {
    const n = this.order;
    this.P.fill(0);
    this.P[0] = this.noise.measurementSigma ** 2;
    this.P[n + 1] = this.noise.initialSigmas[0] ** 2;
    if (n === 3) this.P[8] = this.noise.initialSigmas[1] ** 2;
    this.x[0] = [value[0], value[1], value[2]];
    for (let d = 1; d < n; d++) this.x[d] = [0, 0, 0];
  }

  /**
   * Time update over `dt` seconds: x ← F x, P ← F P Fᵀ + Q. The value row of the state moves by
   * the rates; callers whose "value" is an error state (the orientation filter) zero it afterwards.
   */
  predict(dt: number): void {
    const n = this.order;
    const F = transition(n, dt);
    const x = this.x;
    const next = x.map((_, r) => {
      const row: [number, number, number] = [0, 0, 0];
      for (let c = 0; c < n; c++) {
        const f = F[r * n + c];
        if (f === 0) continue;
        for (let k = 0; k < 3; k++) row[k] += f * x[c][k];
      }
      return row;
    });
    for (let d = 0; d < n; d++) x[d] = next[d];
    const FP = matmul(F, this.P, n);
    const FPFt = matmulTransposed(FP, F, n);
    const Q = processNoise(n, dt, this.noise.processDensity);
    for (let i = 0; i < n * n; i++) this.P[i] = FPFt[i] + Q[i];
  }

  /**
   * Measurement update with innovation `y` (measured value minus predicted value, per axis):
   * x ← x + K y, P ← (I − K H) P.
   */
  update(y: readonly [number, number, number]): void {
    const n = this.order;
    const s = this.P[0] + this.noise.measurementSigma ** 2;
    const K = Array.from({ length: n }, (_, r) => this.P[r * n] / s);
    for (let d = 0; d < n; d++) for (let k = 0; k < 3; k++) this.x[d][k] += K[d] * y[k];
    // (I − K H) P with H = [1 0 0]: subtract K times the first row. Symmetrised against drift.
    const firstRow = this.P.slice(0, n);
    for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) this.P[r * n + c] -= K[r] * firstRow[c];
    for (let r = 0; r < n; r++) {
      for (let c = r + 1; c < n; c++) {
        const m = (this.P[r * n + c] + this.P[c * n + r]) / 2;
        this.P[r * n + c] = m;
        this.P[c * n + r] = m;
      }
    }
  }
}

/** State transition of the kinematic chain over dt (row-major n×n). */
function transition(n: number, dt: number): number[] {
  return n === 2 ? [1, dt, 0, 1] : [1, dt, (dt * dt) / 2, 0, 1, dt, 0, 0, 1];
}

/** Exact discretisation of continuous white noise on the highest derivative (Van Loan). */
function processNoise(n: number, dt: number, q: number): number[] {
  const d2 = dt * dt;
  const d3 = d2 * dt;
  if (n === 2) return [(q * d3) / 3, (q * d2) / 2, (q * d2) / 2, q * dt];
  const d4 = d3 * dt;
  const d5 = d4 * dt;
  return [
    (q * d5) / 20, (q * d4) / 8, (q * d3) / 6,
    (q * d4) / 8, (q * d3) / 3, (q * d2) / 2,
    (q * d3) / 6, (q * d2) / 2, q * dt,
  ];
}

function matmul(a: number[], b: number[], n: number): number[] {
  const out = new Array<number>(n * n).fill(0);
  for (let r = 0; r < n; r++) for (let k = 0; k < n; k++) for (let c = 0; c < n; c++) out[r * n + c] += a[r * n + k] * b[k * n + c];
  return out;
}

/** a · bᵀ */
function matmulTransposed(a: number[], b: number[], n: number): number[] {
  const out = new Array<number>(n * n).fill(0);
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) for (let k = 0; k < n; k++) out[r * n + c] += a[r * n + k] * b[c * n + k];
  return out;
}
