/**
 * A holoquic scene as three.js objects: one `ObjectLayer` per scene object, each with its point
 * material, gathered under one `THREE.Group`. The element's own renderer (sceneRenderer.ts) adds
 * the group to its scene; an application with its own three.js scene adds it to that one
 * (`HoloquicObject`, src/app/holoquicObject.ts) — one definition of how objects are placed and drawn.
 *
 * The group's children are placed in scene metres as the MPD says; moving, turning or scaling the
 * group moves the whole scene within the host's world.
 */
import * as THREE from 'three';
import type { DecodedFrame } from '../model/frames';
import type { SceneModel } from '../model/scene';
import { ObjectLayer } from './objectLayer';
import { createPointMaterial, setSplat, type SplatShape } from './pointMaterial';

/** What to draw per object id now (null: nothing decoded yet). */
export type FrameSource = () => ReadonlyMap<string, { frame: DecodedFrame } | null>;

export interface SceneLayersOptions {
  splat: SplatShape;
  /** Point edge length in voxels; a bit over 1 closes the gaps between neighbouring points seen at an angle. */
  pointVoxels: number;
  /** The renderer's largest point size in pixels (`ALIASED_POINT_SIZE_RANGE`). */
  maxPointSize: number;
}

export class SceneLayers {
  /** Every object of the scene; add it to a three.js scene. */
  readonly group = new THREE.Group();
  private readonly layers: ObjectLayer[] = [];
  private readonly materials: THREE.ShaderMaterial[] = [];
  private readonly viewport = new THREE.Vector4();

  constructor(readonly scene: SceneModel, options: SceneLayersOptions) {
    this.group.name = 'holoquic';
    for (const object of scene.objects) {
      const material = createPointMaterial({ pointSizeM: object.scale * options.pointVoxels, splat: options.splat, maxPointSize: options.maxPointSize });
      const layer = new ObjectLayer(object, material);
      // Per draw (so per eye in XR): the viewport three is about to draw into, in device pixels.
      layer.points.onBeforeRender = (renderer) => {
        material.uniforms.viewportHeight.value = renderer.getCurrentViewport(this.viewport).w;
        // The layer draws with its CPU-path or its GPU-reconstruction material (same uniforms).
        (layer.points.material as THREE.ShaderMaterial).uniformsNeedUpdate = true;
      };
      this.group.add(layer.points);
      this.layers.push(layer);
      this.materials.push(material);
    }
  }

  /** `maxPointSize` for `renderer`'s context. */
  static maxPointSize(renderer: THREE.WebGLRenderer): number {
    return (renderer.getContext().getParameter(WebGL2RenderingContext.ALIASED_POINT_SIZE_RANGE) as Float32Array)[1];
  }

  /**
   * Makes each object show its frame from `frames` (uploading only frames not on the GPU yet).
   * Returns whether any object's picture changed, and how many objects uploaded a frame.
   */
  show(frames: ReturnType<FrameSource> | undefined): { changed: boolean; uploads: number } {
    let changed = false;
    let uploads = 0;
    for (const layer of this.layers) {
      const before = layer.uploads;
      if (layer.show(frames?.get(layer.object.id)?.frame ?? null)) changed = true;
      if (layer.uploads !== before) uploads++;
    }
    return { changed, uploads };
  }

  setSplat(splat: SplatShape): void {
    for (const material of this.materials) setSplat(material, splat);
  }

  /** Points drawn now, over every object. */
  get pointsDrawn(): number {
    return this.layers.reduce((a, l) => a + l.drawnPoints, 0);
  }

  /** Objects with a frame shown. */
  get objectsShown(): number {
    return this.layers.filter((l) => l.drawnPoints > 0).length;
  }

  /** Objects whose current frame is reconstructed on the GPU. */
  get gpuReconstructed(): number {
    return this.layers.filter((l) => l.gpuReconstructed).length;
  }

  /** Releases the GPU buffers, textures and materials, and takes the group out of its parent. */
  dispose(): void {
    for (const layer of this.layers) layer.dispose();
    for (const material of this.materials) material.dispose();
    this.layers.length = 0;
    this.materials.length = 0;
    this.group.removeFromParent();
  }
}
