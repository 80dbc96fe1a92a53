import type { Quat } from './quaternion';

/** A 3D vector or point `[x, y, z]`, in metres when it is a position. */
export type Vec3 = readonly [number, number, number];

/**
 * One head pose sample in a right-handed, +Y-up frame (WebXR / glTF convention, camera looking
 * along its local −Z). `t` is in seconds on the source's own clock; only differences matter.
 */
export interface Pose {
  readonly t: number;
  readonly position: Vec3;
  readonly orientation: Quat;
}
