/**
 * Points and rotations, one definition for every stage: the MPD's placement, head poses, the
 * viewport's ray casts and the renderer all use these.
 */

/** A 3D vector or point `[x, y, z]`, in metres when it is a position in the scene. */
export type Vec3 = readonly [number, number, number];

/**
 * A unit quaternion, scalar last: `[x, y, z, w]` (the WebXR / three.js / glTF / trace-file order).
 * Maths on it: src/viewport/quaternion.ts.
 */
export type Quat = readonly [number, number, number, number];
