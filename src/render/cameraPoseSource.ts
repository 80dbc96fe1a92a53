/**
 * The viewer's head pose as a `PoseSource`: whatever camera the renderer drew with — the orbit or
 * fly camera on a screen, or the WebXR viewer pose in a headset (three copies the XR viewer pose
 * into the user camera while rendering). The renderer publishes once per animation frame.
 */
import * as THREE from 'three';
import type { Pose, PoseSource } from '../model/pose';

export class CameraPoseSource implements PoseSource {
  private readonly listeners = new Set<(pose: Pose) => void>();
  private readonly position = new THREE.Vector3();
  private readonly orientation = new THREE.Quaternion();
  private readonly scale = new THREE.Vector3();
  /** Time of the last pose emitted: consumers require strictly increasing times. */
  private lastT = -Infinity;

  start(emit: (pose: Pose) => void): () => void {
    this.listeners.add(emit);
    return () => this.listeners.delete(emit);
  }

  /** Emits `camera`'s world pose at `tSeconds` to every subscriber. */
  publish(camera: THREE.Camera, tSeconds: number): void {
    if (this.listeners.size === 0) return;
    camera.matrixWorld.decompose(this.position, this.orientation, this.scale);
    this.publishPose(this.position, this.orientation, tSeconds);
  }

  /**
   * Emits a pose given as position and orientation (e.g. an `XRViewerPose` transform: three's XR
   * camera sits a few millimetres behind the eyes to cover both frusta, the viewer pose does not).
   */
  publishPose(p: { x: number; y: number; z: number }, q: { x: number; y: number; z: number; w: number }, tSeconds: number): void {
    // Two draws within the clock's resolution (an explicit render right after an animation frame)
    // would repeat a time; the second pose adds nothing, and predictors reject it.
    if (this.listeners.size === 0 || !(tSeconds > this.lastT)) return;
    this.lastT = tSeconds;
    // A fresh object per pose: predictors keep a history, so a reused one would rewrite it.
    const pose: Pose = { t: tSeconds, position: [p.x, p.y, p.z], orientation: [q.x, q.y, q.z, q.w] };
    for (const emit of this.listeners) emit(pose);
  }
}
