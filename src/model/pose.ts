/**
 * Head poses, where they come from, and the one question the planner asks of the viewport: how
 * much of the screen will each object cover at a given time. The viewport stage (src/viewport/)
 * implements `PoseDrivenViewport`; the renderer and trace replay implement `PoseSource`.
 */
import type { Quat, Vec3 } from './vectors';

/**
 * One head pose sample in a right-handed, +Y-up frame (WebXR / glTF convention, camera looking
 * along its local −Z). `t` is in seconds on the source's own clock; only differences matter.
 */
export interface Pose {
  readonly t: number;
  readonly position: Vec3;
  readonly orientation: Quat;
}

/**
 * Where head poses come from: the WebXR viewer pose or the orbit/fly camera (both owned by the
 * renderer), or a recorded trace replayed in real time (experiments). The player subscribes once
 * and feeds every pose to its predictor; a source emits in time order, at whatever rate it has.
 */
export interface PoseSource {
  /** Starts emitting poses to `emit`; returns the function that stops it. */
  start(emit: (pose: Pose) => void): () => void;
}

/** The narrow viewport interface the planner needs (objects are ranked by it). */
export interface ViewportModel {
  /** Predicted fraction of the screen covered by `objectId` at `timeMs` (0 = not visible). */
  visibleArea(objectId: string, timeMs: number): number;
}

/** A viewport model the player can feed: poses in, visible areas out (src/viewport/visibility.ts). */
export interface PoseDrivenViewport extends ViewportModel {
  observe(pose: Pose): void;
  setProjection(projection: { fovYDeg: number; aspect: number }): void;
  readonly predictorName: string;
}
