import type { SceneModel } from '../model/scene';
import type { Pose } from '../model/pose';
import type { Vec3, Quat } from '../model/vectors';
import { conjugate, multiply } from './quaternion';

/**
 * A stand-in for an object's shape when computing what is visible: the ellipsoid inscribed in its
 * axis-aligned bounding box. A body fills roughly half of its box (the ellipsoid is π/6 ≈ 52 % of
 * the box volume), so the ellipsoid neither hides objects behind the empty corners of a box nor
 * misses the bulk of the body.
 */
export interface ObjectProxy {
  id: string;
  center: Vec3;
  /** Semi-axes along x, y, z (metres), all > 0. */
  radii: Vec3;
}

/** Camera projection: vertical field of view and width/height ratio of the viewport. */
export interface Projection {
  fovYDeg: number;
  aspect: number;
}

export interface RaycastOptions {
  /** About how many rays to cast over the screen (default 2048: e.g. 60×34 at 16:9). */
  rays?: number;
  /**
   * Widens the field of view by this many degrees on every side (default 0), so objects just
   * outside the predicted view still count — a safety margin for prediction error. Fractions are
   * then of the widened screen.
   */
  marginDeg?: number;
  /** Let nearer objects hide farther ones (default true); false counts every object alone. */
  occlusion?: boolean;
}

/** One ellipsoid proxy per object, from the scene's bounding boxes (docs/mpd.md `hq:bbox`). */
export function proxiesFromScene(scene: SceneModel): ObjectProxy[] {
  return scene.objects.map((o) => {
    const { min, max } = o.bbox;
    const radii: Vec3 = [(max[0] - min[0]) / 2, (max[1] - min[1]) / 2, (max[2] - min[2]) / 2];
    if (!radii.every((r) => r > 0 && Number.isFinite(r))) {
      throw new Error(`object ${o.id}: bounding box [${min.join(' ')}] – [${max.join(' ')}] is empty or not finite`);
    }
    return { id: o.id, center: [(min[0] + max[0]) / 2, (min[1] + max[1]) / 2, (min[2] + max[2]) / 2], radii };
  });
}

export function checkProjection(p: Projection): void {
  if (!(p.fovYDeg > 0 && p.fovYDeg < 180) || !(p.aspect > 0) || !Number.isFinite(p.aspect)) {
    throw new Error(`invalid projection: fovYDeg ${p.fovYDeg} (must be in (0, 180)), aspect ${p.aspect} (must be > 0)`);
  }
}

/**
 * Fraction of the screen (0…1) each proxy covers seen from `pose`, nearer proxies hiding farther
 * ones: casts a grid of rays through the pixel centres of a small virtual screen and gives each
 * ray to the nearest proxy it hits. Rays, not rasterised triangles, because an ellipsoid hit is a
 * closed-form quadratic and the whole pass runs in a worker or Node without WebGL.
 *
 * An object too small to catch any ray but whose centre is in view and not hidden gets its
 * analytic projected area instead of 0, so far objects still rank by size rather than all tie.
 *
 * The viewer inside a proxy sees that object over the whole screen (it hides everything else).
 */
export function visibleFractions(proxies: readonly ObjectProxy[], pose: Pose, projection: Projection, options: RaycastOptions = {}): Float64Array {
  checkProjection(projection);
  const margin = ((options.marginDeg ?? 0) * Math.PI) / 180;
  const occlusion = options.occlusion ?? true;
  const halfY = (projection.fovYDeg * Math.PI) / 360;
  const halfX = Math.atan(Math.tan(halfY) * projection.aspect);
  if (!(margin >= 0) || halfY + margin >= Math.PI / 2 || halfX + margin >= Math.PI / 2) {
    throw new Error(`marginDeg ${options.marginDeg} must be ≥ 0 and keep the widened field of view under 180°`);
  }
  const tanX = Math.tan(halfX + margin);
  const tanY = Math.tan(halfY + margin);
  const rays = options.rays ?? 2048;
  if (!(rays >= 1)) throw new Error(`rays must be ≥ 1, got ${rays}`);
  const width = Math.max(1, Math.round(Math.sqrt((rays * tanX) / tanY)));
  const height = Math.max(1, Math.round(rays / width));

  const q = pose.orientation;
  const right = rotate(q, [1, 0, 0]);
  const up = rotate(q, [0, 1, 0]);
  const forward = rotate(q, [0, 0, -1]);
  const eye = pose.position;

  // Per proxy, the eye in the proxy's unit-sphere space (o' = (eye − c)/r) and |o'|² − 1.
  const n = proxies.length;
  const oScaled = proxies.map((p) => [0, 1, 2].map((k) => (eye[k] - p.center[k]) / p.radii[k]));
  const cTerm = oScaled.map((o) => o[0] * o[0] + o[1] * o[1] + o[2] * o[2] - 1);

  const counts = new Float64Array(n);
  const dir = [0, 0, 0];
  for (let row = 0; row < height; row++) {
    const v = (1 - (2 * (row + 0.5)) / height) * tanY;
    for (let col = 0; col < width; col++) {
      const u = ((2 * (col + 0.5)) / width - 1) * tanX;
      for (let k = 0; k < 3; k++) dir[k] = forward[k] + u * right[k] + v * up[k];
      let nearest = -1;
      let nearestT = Infinity;
      for (let i = 0; i < n; i++) {
        const t = hitDistance(proxies[i], oScaled[i], cTerm[i], dir);
        if (t === Infinity) continue;
        if (!occlusion) counts[i]++;
        else if (t < nearestT) {
          nearestT = t;
          nearest = i;
        }
      }
      if (occlusion && nearest >= 0) counts[nearest]++;
    }
  }

  const pixels = width * height;
  const fractions = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (counts[i] > 0) {
      fractions[i] = counts[i] / pixels;
      continue;
    }
    fractions[i] = subPixelFraction(proxies, i, eye, forward, right, up, tanX, tanY, occlusion, oScaled, cTerm);
  }
  return fractions;
}

/**
 * Ray parameter of the first hit of eye + t·dir with the proxy (t ≥ 0; 0 when the eye is inside),
 * or Infinity. In the proxy's unit-sphere space: |o' + t d'|² = 1, a quadratic in t.
 */
function hitDistance(p: ObjectProxy, o: number[], c: number, dir: readonly number[]): number {
  const dx = dir[0] / p.radii[0];
  const dy = dir[1] / p.radii[1];
  const dz = dir[2] / p.radii[2];
  const a = dx * dx + dy * dy + dz * dz;
  const b = o[0] * dx + o[1] * dy + o[2] * dz;
  if (c < 0) return 0; // eye inside the proxy
  if (b >= 0) return Infinity; // proxy behind or moving away
  const disc = b * b - a * c;
  if (disc < 0) return Infinity;
  return (-b - Math.sqrt(disc)) / a;
}

/** Area of an object smaller than a ray cell: its bounding sphere's projection, if its centre is in view and unhidden. */
function subPixelFraction(
  proxies: readonly ObjectProxy[], i: number, eye: Vec3, forward: Vec3, right: Vec3, up: Vec3,
  tanX: number, tanY: number, occlusion: boolean, oScaled: number[][], cTerm: number[],
): number {
  const p = proxies[i];
  const rel = [p.center[0] - eye[0], p.center[1] - eye[1], p.center[2] - eye[2]];
  const depth = dot(rel, forward);
  if (!(depth > 0)) return 0;
  const x = dot(rel, right) / depth;
  const y = dot(rel, up) / depth;
  if (Math.abs(x) > tanX || Math.abs(y) > tanY) return 0;
  if (occlusion) {
    const own = hitDistance(p, oScaled[i], cTerm[i], rel);
    for (let j = 0; j < proxies.length; j++) {
      if (j !== i && hitDistance(proxies[j], oScaled[j], cTerm[j], rel) < own) return 0;
    }
  }
  // Sphere of the mean radius at this depth, on a screen of 2·tanX × 2·tanY at unit distance.
  const radius = (p.radii[0] + p.radii[1] + p.radii[2]) / 3 / depth;
  return (Math.PI * radius * radius) / (4 * tanX * tanY);
}

function rotate(q: Quat, v: Vec3): Vec3 {
  const r = multiply(multiply(q, [v[0], v[1], v[2], 0]), conjugate(q));
  return [r[0], r[1], r[2]];
}

function dot(a: readonly number[], b: readonly number[]): number {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
