import * as THREE from 'three';
import { describe, expect, it } from 'vitest';
import type { SceneModel, SceneObject } from '../model/scene';
import { defaultFraming } from './framing';

const box = (id: string, min: [number, number, number], max: [number, number, number]): SceneObject => ({
  id, codecs: '', position: [0, 0, 0], rotation: [0, 0, 0, 1], scale: 0.001, bbox: { min, max },
  representations: [], loopSegments: 1, playMode: 'loop', startNumber: 1, mediaTemplate: '',
});

const scene: SceneModel = {
  scene: 'test', segmentDuration: 1, passDuration: 1,
  objects: [box('a', [-3, 0, -1], [-2, 2, 0]), box('b', [2, 0, 0], [3, 1.8, 1]), box('c', [-0.5, 0, -4], [0.5, 1.9, -3])],
};

describe('defaultFraming', () => {
  it('looks at the scene centre from outside every bounding box', () => {
    const { eye, target } = defaultFraming(scene, 50, 16 / 9);
    expect(target.toArray()).toEqual([0, 1, -1.5]);
    for (const o of scene.objects) {
      const b = new THREE.Box3(new THREE.Vector3(...o.bbox.min), new THREE.Vector3(...o.bbox.max));
      expect(b.containsPoint(eye)).toBe(false);
    }
  });

  it('fits every box corner inside the field of view', () => {
    for (const aspect of [16 / 9, 0.5]) {
      const { eye, target } = defaultFraming(scene, 50, aspect);
      const camera = new THREE.PerspectiveCamera(50, aspect, 0.01, 100);
      camera.position.copy(eye);
      camera.lookAt(target);
      camera.updateMatrixWorld();
      for (const o of scene.objects) {
        for (const x of [o.bbox.min[0], o.bbox.max[0]]) for (const y of [o.bbox.min[1], o.bbox.max[1]]) for (const z of [o.bbox.min[2], o.bbox.max[2]]) {
          const p = new THREE.Vector3(x, y, z).project(camera);
          expect(Math.abs(p.x)).toBeLessThanOrEqual(1);
          expect(Math.abs(p.y)).toBeLessThanOrEqual(1);
        }
      }
    }
  });
});
