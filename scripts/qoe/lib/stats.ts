/**
 * Confidence intervals of the QoE report: the mean of a few repetitions with its 95 % interval
 * from Student's t distribution (the repetitions' spread is estimated from the repetitions
 * themselves, so with 3 runs the interval is 4.3 standard errors wide each way, not 1.96).
 *
 * Written here rather than taken from a package: the project needs one quantile of one
 * distribution for integer degrees of freedom, which has a closed form (below).
 */

/**
 * P(|T| ≤ t) for Student's t with `df` (a positive integer) degrees of freedom, from the finite
 * series in cos θ, θ = atan(t / √df) (Abramowitz & Stegun 26.7.3–4): for odd df
 * (2/π)(θ + sin θ (cos θ + (2/3) cos³θ + … )), for even df sin θ (1 + (1/2) cos²θ + (1·3)/(2·4) cos⁴θ + …),
 * each series running to the power df − 2.
 */
export function studentTwoSidedCdf(t: number, df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new Error(`degrees of freedom must be a positive integer, got ${df}`);
  const x = Math.abs(t);
  if (x === Infinity) return 1;
  const theta = Math.atan(x / Math.sqrt(df));
  const c = Math.cos(theta), s = Math.sin(theta);
  if (df % 2 === 1) {
    // Terms cos θ, (2/3) cos³θ, (2·4)/(3·5) cos⁵θ, …: each the last × cos²θ × k / (k + 1), k = 2, 4, …
    let term = c, sum = df > 1 ? c : 0;
    for (let k = 2; k <= df - 3; k += 2) {
      term *= (c * c * k) / (k + 1);
      sum += term;
    }
    return (2 / Math.PI) * (theta + s * sum);
  }
  // Terms 1, (1/2) cos²θ, (1·3)/(2·4) cos⁴θ, …: each the last × cos²θ × (k − 1) / k, k = 2, 4, …
  let term = 1, sum = 1;
  for (let k = 2; k <= df - 2; k += 2) {
    term *= (c * c * (k - 1)) / k;
    sum += term;
  }
  return s * sum;
}

/** The t with P(|T| ≤ t) = `confidence` (e.g. 0.95 → 12.706 for df 1, 4.303 for 2, 1.96 as df → ∞). */
export function studentCriticalValue(df: number, confidence = 0.95): number {
  if (!(confidence > 0 && confidence < 1)) throw new Error(`confidence must be in (0, 1), got ${confidence}`);
  // P(|T| ≤ t) grows with t: bisection on a bracket that holds even df = 1 at 0.9999 (t ≈ 6366).
  let lo = 0, hi = 1e5;
  for (let i = 0; i < 200 && hi - lo > 1e-10 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentTwoSidedCdf(mid, df) < confidence) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** A mean over repetitions with its 95 % confidence interval. */
export interface MeanWithInterval {
  mean: number;
  /** Sample standard deviation (n − 1); 0 for one value. */
  sd: number;
  n: number;
  /** Half-width of the 95 % interval, t(0.975, n − 1) · sd / √n; NaN below two values (no spread to estimate). */
  ci95: number;
}

/** Mean, sample standard deviation and 95 % Student t interval of the finite values (NaN left out). */
export function meanWithInterval(values: readonly number[]): MeanWithInterval {
  const v = values.filter((x) => Number.isFinite(x));
  if (v.length === 0) return { mean: NaN, sd: NaN, n: 0, ci95: NaN };
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  if (v.length < 2) return { mean, sd: 0, n: 1, ci95: NaN };
  const sd = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / (v.length - 1));
  return { mean, sd, n: v.length, ci95: (studentCriticalValue(v.length - 1) * sd) / Math.sqrt(v.length) };
}

/** How the report states its intervals, once, beside every table that uses them. */
export const CI_NOTE = '± is the 95 % confidence interval of the mean over repetitions (Student t, n − 1 degrees of freedom; none shown for one run)';

/** Means equal up to rounding noise count as equal (a freeze count of 0.33 against 1/3, a ratio of 0.7999… against 0.8). */
export const EPSILON = 1e-9;
