import type { Pose } from './pose';

/**
 * Where head poses come from: the WebXR viewer pose or the orbit/fly camera (both owned by the
 * renderer), or a recorded trace replayed in real time (experiments). The player subscribes once
 * and feeds every pose to its predictor; a source emits in time order, at whatever rate it has.
 */
export interface PoseSource {
  /** Starts emitting poses to `emit`; returns the function that stops it. */
  start(emit: (pose: Pose) => void): () => void;
}
