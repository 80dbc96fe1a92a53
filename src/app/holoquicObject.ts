/**
 * `HoloquicObject`: a holoquic scene inside an application's own three.js scene and render loop,
 * for apps that already have a renderer (docs/embedding.md → "Into your own three.js scene").
 * It is the element without its canvas: the same `Player`, decode workers and scene layers
 * (src/render/sceneLayers.ts), but the app owns the renderer, the camera and the loop.
 *
 * ```ts
 * const holo = new HoloquicObject({ src: '/content/demo/manifest.mpd' });
 * scene.add(holo.object3D);
 * await holo.play();
 * renderer.setAnimationLoop(() => { holo.update(renderer, camera); renderer.render(scene, camera); });
 * ```
 *
 * `update()` shows each object's current frame and tells the player where the viewer is: the
 * camera's pose relative to `object3D` (so an app may move, turn or scale the object), or in
 * WebXR the headset's, and the camera's projection — the player ranks and fetches by what is in view.
 */
import * as THREE from 'three';
import { createDecoderPool, type DecoderPoolStats } from '../decoder';
import type { SceneModel } from '../model/scene';
import { Player } from '../player/player';
import { CameraPoseSource } from '../render/cameraPoseSource';
import type { SplatShape } from '../render/pointMaterial';
import { probeRenderer, type ReconstructionChoice, reconstructionFor } from '../render/rasterizer';
import { SceneLayers } from '../render/sceneLayers';
import { createViewportModel } from '../viewport/visibility';
import type { HoloquicPlayerOptions } from './component';

export interface HoloquicObjectOptions extends HoloquicPlayerOptions {
  /** The scene's manifest URL. */
  src: string;
  /** Point shape (default `round`). */
  splat?: SplatShape;
  /** Point edge length in voxels (default 1.5). */
  pointVoxels?: number;
  /** Where frames are reconstructed (default `auto`: the workers on a software rasteriser, the shader on a GPU). */
  reconstruction?: ReconstructionChoice;
}

export class HoloquicObject {
  /** The streamed scene: add it to your scene; its children appear as frames arrive. */
  readonly object3D = new THREE.Group();
  /** The engine: `play()`, `pause()`, `seek()`, `currentTime`, `duration`, `maxQuality`, `getStats()`, events. */
  readonly player: Player;
  private readonly decoder: ReturnType<typeof createDecoderPool> | null;
  private readonly poseSource = new CameraPoseSource();
  private layers: SceneLayers | null = null;
  private readonly splat: SplatShape;
  private readonly pointVoxels: number;
  private readonly relative = new THREE.Matrix4();
  private readonly inverse = new THREE.Matrix4();
  private readonly position = new THREE.Vector3();
  private readonly orientation = new THREE.Quaternion();
  private readonly scale = new THREE.Vector3();
  private projection = { fovYDeg: 0, aspect: 0 };
  private disposed = false;

  constructor(options: HoloquicObjectOptions) {
    const { src, splat, pointVoxels, reconstruction, ...playerOptions } = options;
    this.splat = splat ?? 'round';
    this.pointVoxels = pointVoxels ?? 1.5;
    this.object3D.name = 'holoquic-object';
    // As in the element: on a GPU, frames it reconstructs exactly stay pictures + atlas; on a
    // software rasteriser (the page's WebGL2, probed) the workers reconstruct points.
    const path = reconstructionFor(reconstruction ?? 'auto', probeRenderer());
    this.decoder = playerOptions.decoder ? null : createDecoderPool({ output: path === 'gpu' ? 'auto' : 'points' });
    this.player = new Player({
      viewport: (scene: SceneModel) => Object.assign(createViewportModel(scene), { predictorName: 'default' }),
      ...playerOptions, manifestUrl: src, decoder: playerOptions.decoder ?? this.decoder!,
    });
    this.player.setPoseSource(this.poseSource);
  }

  /** Reads the origin's configuration and the manifest and connects; the scene model. */
  load(): Promise<SceneModel> {
    return this.player.load();
  }

  /** Loads if needed and plays; resolves once the scene is loaded (frames follow as segments arrive). */
  async play(): Promise<void> {
    await this.player.load();
    this.player.play();
  }

  pause(): void {
    this.player.pause();
  }

  /** Points drawn now, over every object (0 before the first frames). */
  get pointsDrawn(): number {
    return this.layers?.pointsDrawn ?? 0;
  }

  /** The decode worker pool's counters (null with a decoder of your own). */
  decoderStats(): DecoderPoolStats | null {
    return this.decoder?.stats() ?? null;
  }

  /**
   * Call once per frame before `renderer.render(…)`: shows each object's current frame and
   * reports the viewer's pose and projection to the player. Returns whether any object's picture
   * changed (an app that redraws only on change can skip a frame when it did not and the camera
   * stood still).
   */
  update(renderer: THREE.WebGLRenderer, camera: THREE.PerspectiveCamera): boolean {
    if (this.disposed) return false;
    const scene = this.player.scene;
    if (!scene) return false;
    if (!this.layers) {
      this.layers = new SceneLayers(scene, { splat: this.splat, pointVoxels: this.pointVoxels, maxPointSize: SceneLayers.maxPointSize(renderer) });
      this.object3D.add(this.layers.group);
    }
    const { changed } = this.layers.show(this.player.currentFrames());
    this.publishViewer(renderer, camera);
    return changed;
  }

  /** Stops playback, the decode workers, and releases the GPU buffers; `object3D` leaves its parent. */
  dispose(): void {
    this.disposed = true;
    this.player.close();
    this.decoder?.close();
    this.layers?.dispose();
    this.layers = null;
    this.object3D.removeFromParent();
  }

  /** The viewer's pose in the scene's own metres (relative to `object3D`), and the projection. */
  private publishViewer(renderer: THREE.WebGLRenderer, camera: THREE.PerspectiveCamera): void {
    const xr = renderer.xr;
    const viewer: THREE.Camera = xr.isPresenting ? xr.getCamera() : camera;
    this.object3D.updateWorldMatrix(true, false);
    viewer.updateMatrixWorld();
    this.relative.multiplyMatrices(this.inverse.copy(this.object3D.matrixWorld).invert(), viewer.matrixWorld);
    this.relative.decompose(this.position, this.orientation, this.scale);
    this.poseSource.publishPose(this.position, this.orientation, performance.now() / 1000);
    const fovYDeg = camera.fov;
    const aspect = camera.aspect;
    if (Math.abs(fovYDeg - this.projection.fovYDeg) < 0.01 && Math.abs(aspect - this.projection.aspect) < 0.001) return;
    this.projection = { fovYDeg, aspect };
    this.player.setViewport(this.projection);
  }
}
