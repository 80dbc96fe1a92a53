/**
 * What every head-pose predictor offers the viewport model. A module of its own so the predictors
 * (predictors.ts, kalman.ts, horizonGains.ts) and the choice of the default one all import it
 * without importing one another in a circle.
 */
import type { Pose } from '../model/pose';

/**
 * A head-pose predictor: feed it every pose sample in time order with `observe`, then ask where the
 * head will be `horizonMs` after the latest sample (the player sets the horizon per call to the
 * playout time of the segment it is about to request).
 */
export interface Predictor {
  observe(pose: Pose): void;
  /** Predicted pose at `latest.t + horizonMs / 1000`; throws if nothing was observed yet. */
  predict(horizonMs: number): Pose;
}
