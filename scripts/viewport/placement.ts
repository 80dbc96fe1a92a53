/**
 * Puts a recorded head trace into the demo scene, so object-level accuracy is measured with real
 * head motion in front of our own object layout.
 *
 * The traces were recorded around one object: the CWI viewers around 8i content at their origin
 * (floor at y = 0), the HHI viewers around a hologram at an unrecorded spot (origin = head at app
 * start, so y ≈ 0 is eye height). Each trace is translated (never rotated or scaled, which would
 * change the motion) so that the object it was recorded around stands where the scene's first
 * object stands; the other objects of the demo circle are then around and behind it, as when a
 * viewer walks up to one figure of the group.
 */
import type { SceneModel } from '../../src/model/scene';
import type { Pose } from '../../src/model/pose';
import type { Vec3 } from '../../src/model/vectors';
import { conjugate, multiply } from '../../src/viewport/quaternion';
import type { Dataset } from './traces';

/** Eye height given to HHI traces, whose y = 0 is the head at app start. */
const EYE_HEIGHT = 1.6;

export function placeTrace(poses: readonly Pose[], dataset: Dataset, scene: SceneModel): Pose[] {
  const target = scene.objects[0].bbox;
  const anchor: Vec3 = [(target.min[0] + target.max[0]) / 2, target.min[1], (target.min[2] + target.max[2]) / 2];
  const content = dataset === 'cwi' ? [0, 0, 0] : gazeCentre(poses);
  const shift = [anchor[0] - content[0], anchor[1] + (dataset === 'hhi' ? EYE_HEIGHT : 0), anchor[2] - content[2]];
  return poses.map((p) => ({ ...p, position: [p.position[0] + shift[0], p.position[1] + shift[1], p.position[2] + shift[2]] }));
}

/**
 * The floor point (x, z) the viewer looked at most: least-squares closest point to all horizontal
 * gaze lines (the viewing directions projected on the floor).
 */
function gazeCentre(poses: readonly Pose[]): [number, number, number] {
  let a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
  for (const p of poses) {
    const f = multiply(multiply(p.orientation, [0, 0, -1, 0]), conjugate(p.orientation));
    const n = Math.hypot(f[0], f[2]);
    if (n < 0.3) continue; // looking nearly straight up or down: no horizontal direction
    const dx = f[0] / n;
    const dz = f[2] / n;
    // Distance² from c to the line through x along d is |(I − d dᵀ)(c − x)|²; sum the normal equations.
    const m11 = 1 - dx * dx, m12 = -dx * dz, m22 = 1 - dz * dz;
    a11 += m11; a12 += m12; a22 += m22;
    b1 += m11 * p.position[0] + m12 * p.position[2];
    b2 += m12 * p.position[0] + m22 * p.position[2];
  }
  const det = a11 * a22 - a12 * a12;
  if (!(det > 1e-9)) throw new Error('gazeCentre: viewing directions are all parallel');
  return [(a22 * b1 - a12 * b2) / det, 0, (a11 * b2 - a12 * b1) / det];
}
