/**
 * How wrong a head-pose predictor is on a recorded trace: replays the trace, predicts ahead at
 * each sample and measures the error against the true (interpolated) pose at that time. The
 * measurement behind scripts/viewport/evaluate.ts and the gain fitting.
 */
import type { Pose } from '../../src/model/pose';
import type { Predictor } from '../../src/viewport/predictor';
import { angleBetween, slerp } from '../../src/viewport/quaternion';

/** The true pose at time `t`, interpolated between the two samples around it (undefined outside). */
export function poseAt(trace: readonly Pose[], t: number, fromIndex = 0): Pose | undefined {
  for (let i = Math.max(1, fromIndex); i < trace.length; i++) {
    const b = trace[i];
    if (b.t < t) continue;
    const a = trace[i - 1];
    if (a.t > t) return undefined;
    const s = (t - a.t) / (b.t - a.t);
    return {
      t,
      position: [
        a.position[0] + s * (b.position[0] - a.position[0]),
        a.position[1] + s * (b.position[1] - a.position[1]),
        a.position[2] + s * (b.position[2] - a.position[2]),
      ],
      orientation: slerp(a.orientation, b.orientation, s),
    };
  }
  return undefined;
}

export interface PredictionError {
  /** Mean absolute position error, metres. */
  positionMae: number;
  /** Mean absolute orientation error (rotation angle), degrees. */
  orientationMaeDeg: number;
  samples: number;
}

/** Every single error of one predictor at one horizon, for means, percentiles and pooling. */
export interface HorizonErrors {
  horizonMs: number;
  /** Metres, one per prediction. */
  position: number[];
  /** Degrees, one per prediction. */
  orientationDeg: number[];
}

/**
 * Replays `trace` through a fresh predictor; after every sample it predicts each horizon ahead and
 * compares with the interpolated true pose at that time (targets past the end of the trace are
 * skipped). One replay serves all horizons, so the predictor sees exactly the live sequence.
 */
export function evaluateHorizons(trace: readonly Pose[], predictor: Predictor, horizonsMs: readonly number[]): HorizonErrors[] {
  const out = horizonsMs.map((horizonMs) => ({ horizonMs, position: [] as number[], orientationDeg: [] as number[] }));
  for (let i = 0; i < trace.length; i++) {
    predictor.observe(trace[i]);
    for (const e of out) {
      const truth = poseAt(trace, trace[i].t + e.horizonMs / 1000, i + 1);
      if (!truth) continue;
      const guess = predictor.predict(e.horizonMs);
      e.position.push(Math.hypot(
        guess.position[0] - truth.position[0],
        guess.position[1] - truth.position[1],
        guess.position[2] - truth.position[2],
      ));
      e.orientationDeg.push(angleBetween(guess.orientation, truth.orientation) * (180 / Math.PI));
    }
  }
  return out;
}

/** Mean and 95th percentile (nearest rank) of a non-empty list. */
export function meanAndP95(values: readonly number[]): { mean: number; p95: number } {
  if (values.length === 0) throw new Error('meanAndP95: no values');
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return { mean: sum / sorted.length, p95: sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)] };
}

/** Mean errors of one predictor on one trace at one horizon. */
export function evaluatePredictor(trace: readonly Pose[], predictor: Predictor, horizonMs: number): PredictionError {
  const [e] = evaluateHorizons(trace, predictor, [horizonMs]);
  if (e.position.length === 0) throw new Error(`evaluatePredictor: trace too short for a ${horizonMs} ms horizon`);
  return {
    positionMae: meanAndP95(e.position).mean,
    orientationMaeDeg: meanAndP95(e.orientationDeg).mean,
    samples: e.position.length,
  };
}
