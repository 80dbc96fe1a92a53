/**
 * Where the default camera goes: outside every object's bounding box, looking at the centre of
 * the scene, far enough back that the whole scene fits the vertical field of view.
 */
import * as THREE from 'three';
import type { SceneModel } from '../model/scene';

export interface Framing {
  /** Centre of the union of the objects' bounding boxes (the orbit target). */
  target: THREE.Vector3;
  /** Camera position. */
  eye: THREE.Vector3;
  /** Radius of the sphere around `target` that holds every bounding box. */
  radius: number;
}

/** Union of the objects' MPD bounding boxes, in scene metres. */
export function sceneBounds(scene: SceneModel): THREE.Box3 {
  const box = new THREE.Box3();
  for (const o of scene.objects) {
    box.expandByPoint(new THREE.Vector3().fromArray(o.bbox.min));
    box.expandByPoint(new THREE.Vector3().fromArray(o.bbox.max));
  }
  return box;
}

/**
 * The default view for `scene` with a camera of vertical field of view `fovYDeg` and `aspect`:
 * from the +Z side (the scene's front by convention), slightly above the centre.
 */
export function defaultFraming(scene: SceneModel, fovYDeg: number, aspect: number): Framing {
  const bounds = sceneBounds(scene);
  const target = bounds.getCenter(new THREE.Vector3());
  const radius = Math.max(bounds.getSize(new THREE.Vector3()).length() / 2, 0.1);
  // Distance at which a sphere of `radius` fits the narrower of the two fields of view.
  const halfFovY = THREE.MathUtils.degToRad(fovYDeg) / 2;
  const halfFov = Math.min(halfFovY, Math.atan(Math.tan(halfFovY) * aspect));
  const distance = (radius / Math.sin(halfFov)) * 1.05;
  // Being farther than `radius` from the centre puts the eye outside every bounding box.
  const direction = new THREE.Vector3(0, 0.25, 1).normalize();
  return { target, eye: target.clone().addScaledVector(direction, distance), radius };
}
