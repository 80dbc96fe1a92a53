import type { Pose } from './pose';
import type { Predictor } from './predictors';
import { angleBetween, slerp } from './quaternion';

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

/**
 * Replays `trace` through a fresh predictor; after every sample it predicts `horizonMs` ahead and
 * compares with the interpolated true pose at that time (samples whose target lies past the end of
 * the trace are skipped).
 */
export function evaluatePredictor(trace: readonly Pose[], predictor: Predictor, horizonMs: number): PredictionError {
  let positionSum = 0;
  let angleSum = 0;
  let n = 0;
  for (let i = 0; i < trace.length; i++) {
    predictor.observe(trace[i]);
    const target = trace[i].t + horizonMs / 1000;
    const truth = poseAt(trace, target, i + 1);
    if (!truth) continue;
    const guess = predictor.predict(horizonMs);
    positionSum += Math.hypot(
      guess.position[0] - truth.position[0],
      guess.position[1] - truth.position[1],
      guess.position[2] - truth.position[2],
    );
    angleSum += angleBetween(guess.orientation, truth.orientation);
    n++;
  }
  if (n === 0) throw new Error(`evaluatePredictor: trace too short for a ${horizonMs} ms horizon`);
  return { positionMae: positionSum / n, orientationMaeDeg: (angleSum / n) * (180 / Math.PI), samples: n };
}
