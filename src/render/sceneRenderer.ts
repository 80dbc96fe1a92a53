/**
 * The three.js view of a holoquic scene for the element's own canvas: the scene's layers
 * (sceneLayers.ts), an orbit or fly camera (orbit: drag or one finger to turn, wheel or two-finger
 * pinch to zoom, two fingers to pan — three's OrbitControls reads pointer events of every kind), WebXR,
 * and the animation loop.
 *
 * Pacing: `renderer.setAnimationLoop` runs at the display's (or headset's) rate. Each animation
 * frame asks the frame source — the player's `currentFrames()` — what to draw; the content clock
 * (30 frames/s, standing still during freezes) lives in the player, so the two rates never need to
 * agree and a layer uploads only when its frame changed.
 */
import * as THREE from 'three';
import { FlyControls } from 'three/examples/jsm/controls/FlyControls.js';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import type { SceneModel } from '../model/scene';
import { CameraPoseSource } from './cameraPoseSource';
import { defaultFraming } from './framing';
import type { SplatShape } from './pointMaterial';
import { RateMeter } from './rateMeter';
import { type FrameSource, SceneLayers } from './sceneLayers';
import { startXRSession, supportedXRModes, type XRMode } from './xr';

export type { FrameSource } from './sceneLayers';

export type CameraMode = 'orbit' | 'fly';

export interface SceneRendererOptions {
  splat?: SplatShape;
  /** Point edge length in voxels; a bit over 1 closes the gaps between neighbouring points seen at an angle. */
  pointVoxels?: number;
  background?: THREE.ColorRepresentation;
  fovYDeg?: number;
}

export interface RenderStats {
  /** Frames drawn per second (a still scene under a still camera is not redrawn). */
  renderFps: number;
  /** Distinct content frames uploaded per second, averaged over the objects shown. */
  contentFps: number;
  /** Milliseconds the last drawn frame took on the CPU (frame lookup, uploads, draw calls). */
  frameMs: number;
  pointsDrawn: number;
  /** Objects whose current frame is reconstructed on the GPU (the rest were reconstructed by the workers). */
  gpuReconstructed: number;
  /** `performance.now()` when the last draw finished (ms). */
  lastDrawAt: number;
  /** Live GPU resources as three counts them (flat over a session when pools work). */
  geometries: number;
  textures: number;
  drawCalls: number;
  presenting: XRMode | null;
}

const DEFAULTS: Required<SceneRendererOptions> = { splat: 'round', pointVoxels: 1.5, background: 0x101318, fovYDeg: 50 };

export class SceneRenderer {
  readonly renderer: THREE.WebGLRenderer;
  readonly camera: THREE.PerspectiveCamera;
  /** The viewer's pose every animation frame (screen camera or XR viewer). */
  readonly poseSource = new CameraPoseSource();
  private readonly scene = new THREE.Scene();
  private layers: SceneLayers | null = null;
  private readonly options: Required<SceneRendererOptions>;
  /** Distance from the camera to what it looks at (orbit target), kept when switching modes. */
  private focusDistance = 3;
  private lastFrameAt = NaN;
  /** Something changed that the next animation frame must draw (scene, size, splat). */
  private dirty = true;
  private readonly lastCameraMatrix = new THREE.Matrix4();
  private readonly renderRate = new RateMeter();
  private readonly uploadRate = new RateMeter();
  private readonly resizeObserver: ResizeObserver;
  private orbit: OrbitControls | null = null;
  private fly: FlyControls | null = null;
  private frameSource: FrameSource | null = null;
  private frameMs = 0;
  private lastDrawAt = NaN;
  private xrMode: XRMode | null = null;
  private projectionListener: ((p: { fovYDeg: number; aspect: number }) => void) | null = null;
  private xrVisibilityListener: (() => void) | null = null;
  private lastProjection = { fovYDeg: 0, aspect: 0 };
  private running = false;

  constructor(private readonly container: HTMLElement, options: SceneRendererOptions = {}) {
    this.options = { ...DEFAULTS, ...options };
    this.renderer = new THREE.WebGLRenderer({ antialias: false, alpha: true, powerPreference: 'high-performance' });
    this.renderer.setPixelRatio(globalThis.devicePixelRatio ?? 1);
    this.renderer.xr.enabled = true;
    this.renderer.domElement.style.display = 'block';
    this.renderer.domElement.style.width = '100%';
    this.renderer.domElement.style.height = '100%';
    container.appendChild(this.renderer.domElement);
    this.scene.background = new THREE.Color(this.options.background);
    this.camera = new THREE.PerspectiveCamera(this.options.fovYDeg, 1, 0.05, 200);
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(container);
    this.resize();
    this.setCameraMode('orbit');
  }

  /** Builds the layers for `scene` (replacing any previous scene) and frames the default view. */
  setScene(scene: SceneModel): void {
    this.layers?.dispose();
    this.layers = new SceneLayers(scene, { splat: this.options.splat, pointVoxels: this.options.pointVoxels, maxPointSize: SceneLayers.maxPointSize(this.renderer) });
    this.scene.add(this.layers.group);
    const framing = defaultFraming(scene, this.camera.fov, this.camera.aspect);
    this.camera.position.copy(framing.eye);
    this.focusDistance = framing.eye.distanceTo(framing.target);
    this.camera.lookAt(framing.target);
    this.camera.near = Math.max(0.01, framing.radius / 200);
    this.camera.far = framing.radius * 50 + 10;
    this.camera.updateProjectionMatrix();
    if (this.orbit) {
      this.orbit.target.copy(framing.target);
      this.orbit.update();
    }
    if (this.fly) this.fly.movementSpeed = framing.radius / 2;
    this.dirty = true;
  }

  setFrameSource(source: FrameSource | null): void {
    this.frameSource = source;
  }

  /** Called with the camera projection whenever it changes (the player predicts on-screen areas with it). */
  onProjectionChange(listener: ((p: { fovYDeg: number; aspect: number }) => void) | null): void {
    this.projectionListener = listener;
    this.lastProjection = { fovYDeg: 0, aspect: 0 };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.renderer.setAnimationLoop(() => this.frame());
  }

  stop(): void {
    this.running = false;
    this.renderer.setAnimationLoop(null);
  }

  setSplat(splat: SplatShape): void {
    this.layers?.setSplat(splat);
    this.options.splat = splat;
    this.dirty = true;
  }

  /** Orbit: drag to turn around the scene centre, wheel to zoom. Fly: WASD/RF to move, drag to look, QE to roll. */
  setCameraMode(mode: CameraMode): void {
    const dom = this.renderer.domElement;
    if (mode === 'orbit' && !this.orbit) {
      this.fly?.dispose();
      this.fly = null;
      this.orbit = new OrbitControls(this.camera, dom);
      this.orbit.enableDamping = true;
      // Orbit around what the camera looks at now, a scene-sized distance ahead.
      const ahead = new THREE.Vector3(0, 0, -1).applyQuaternion(this.camera.quaternion);
      this.orbit.target.copy(this.camera.position).addScaledVector(ahead, this.focusDistance);
      this.orbit.update();
    } else if (mode === 'fly' && !this.fly) {
      if (this.orbit) this.focusDistance = this.camera.position.distanceTo(this.orbit.target);
      this.orbit?.dispose();
      this.orbit = null;
      this.fly = new FlyControls(this.camera, dom);
      this.fly.dragToLook = true;
      this.fly.rollSpeed = 0.6;
      this.fly.movementSpeed = 1;
    }
  }

  /** The clear colour as 8-bit sRGB `[r, g, b]` (what an empty pixel reads back as). */
  get background(): [number, number, number] {
    const hex = new THREE.Color(this.options.background).getHex();
    return [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255];
  }

  get cameraMode(): CameraMode {
    return this.fly ? 'fly' : 'orbit';
  }

  supportedXRModes(): Promise<XRMode[]> {
    return supportedXRModes();
  }

  /**
   * What the headset shows of the immersive session ('hidden' when, say, the headset is off or a
   * system screen covers it); null when not presenting.
   */
  get xrVisibility(): XRVisibilityState | null {
    return this.xrMode ? (this.renderer.xr.getSession()?.visibilityState ?? null) : null;
  }

  /** Called when `xrVisibility` changes, also when a session starts or ends (one listener). */
  onXRVisibilityChange(listener: (() => void) | null): void {
    this.xrVisibilityListener = listener;
  }

  /** Enters an immersive session; resolves once presenting. */
  async enterXR(mode: XRMode): Promise<void> {
    const session = await startXRSession(this.renderer, mode);
    this.xrMode = mode;
    session.addEventListener('visibilitychange', () => this.xrVisibilityListener?.());
    // AR shows the real world behind the points.
    const background = this.scene.background;
    if (mode === 'immersive-ar') this.scene.background = null;
    session.addEventListener('end', () => {
      this.xrMode = null;
      this.scene.background = background;
      this.dirty = true;
      this.xrVisibilityListener?.();
    });
    this.xrVisibilityListener?.();
  }

  async exitXR(): Promise<void> {
    await this.renderer.xr.getSession()?.end();
  }

  /** Draws one frame now (outside the animation loop: benchmarks and tests). */
  renderOnce(): void {
    this.frame(true);
  }

  stats(): RenderStats {
    const info = this.renderer.info;
    const shown = this.layers?.objectsShown ?? 0;
    return {
      renderFps: this.renderRate.perSecond(),
      contentFps: shown ? this.uploadRate.perSecond() / shown : 0,
      frameMs: this.frameMs,
      pointsDrawn: this.layers?.pointsDrawn ?? 0,
      gpuReconstructed: this.layers?.gpuReconstructed ?? 0,
      lastDrawAt: this.lastDrawAt,
      geometries: info.memory.geometries,
      textures: info.memory.textures,
      drawCalls: info.render.calls,
      presenting: this.xrMode,
    };
  }

  /** Projects scene point `p` (metres) to CSS pixels of the canvas, or null when behind the camera. */
  project(p: readonly [number, number, number]): { x: number; y: number } | null {
    const v = new THREE.Vector3(p[0], p[1], p[2]).project(this.camera);
    if (v.z < -1 || v.z > 1) return null;
    const rect = this.renderer.domElement.getBoundingClientRect();
    return { x: ((v.x + 1) / 2) * rect.width, y: ((1 - v.y) / 2) * rect.height };
  }

  dispose(): void {
    this.stop();
    // A headset session outlives the page's element otherwise.
    void this.renderer.xr.getSession()?.end().catch(() => undefined);
    this.resizeObserver.disconnect();
    this.orbit?.dispose();
    this.fly?.dispose();
    this.layers?.dispose();
    this.renderer.dispose();
    // Browsers keep a few WebGL contexts per page: give this one back now, not at garbage collection.
    this.renderer.forceContextLoss();
    this.renderer.domElement.remove();
  }

  /**
   * One animation frame. Draws only when something visible changed — a new content frame, the
   * camera, the size — or always while presenting XR (the headset needs every frame): a paused or
   * frozen scene under a still camera then costs next to nothing, which matters with software GL.
   */
  private frame(force = false): void {
    const started = performance.now();
    const delta = Number.isFinite(this.lastFrameAt) ? Math.min(0.1, (started - this.lastFrameAt) / 1000) : 0;
    this.lastFrameAt = started;
    const frames = this.frameSource?.();
    let changed = force || this.dirty || this.renderer.xr.isPresenting;
    const shown = this.layers?.show(frames);
    if (shown?.changed) changed = true;
    for (let i = 0; i < (shown?.uploads ?? 0); i++) this.uploadRate.tick(started);
    if (!this.renderer.xr.isPresenting) {
      this.orbit?.update();
      this.fly?.update(delta);
      this.camera.updateMatrixWorld();
      if (!this.camera.matrixWorld.equals(this.lastCameraMatrix)) {
        this.lastCameraMatrix.copy(this.camera.matrixWorld);
        changed = true;
      }
    }
    if (changed) {
      this.dirty = false;
      this.renderer.render(this.scene, this.camera);
      this.renderRate.tick(started);
      this.lastDrawAt = performance.now();
      this.frameMs = this.lastDrawAt - started;
    }
    this.publishPose(started / 1000);
    this.reportProjection();
  }

  /** The viewer pose in XR (from the frame), else the camera's. */
  private publishPose(tSeconds: number): void {
    const xr = this.renderer.xr;
    if (xr.isPresenting) {
      const space = xr.getReferenceSpace();
      const viewer = space ? xr.getFrame()?.getViewerPose(space) : undefined;
      if (viewer) return this.poseSource.publishPose(viewer.transform.position, viewer.transform.orientation, tSeconds);
    }
    this.poseSource.publish(this.camera, tSeconds);
  }

  private reportProjection(): void {
    if (!this.projectionListener) return;
    let fovYDeg = this.camera.fov;
    let aspect = this.camera.aspect;
    if (this.renderer.xr.isPresenting) {
      // The first eye's projection stands for both: P[1][1] = 1 / tan(fovY / 2).
      const eye = this.renderer.xr.getCamera().cameras[0];
      if (eye) {
        const e = eye.projectionMatrix.elements;
        fovYDeg = THREE.MathUtils.radToDeg(2 * Math.atan(1 / e[5]));
        aspect = e[5] / e[0];
      }
    }
    if (Math.abs(fovYDeg - this.lastProjection.fovYDeg) < 0.01 && Math.abs(aspect - this.lastProjection.aspect) < 0.001) return;
    this.lastProjection = { fovYDeg, aspect };
    this.projectionListener({ fovYDeg, aspect });
  }

  private resize(): void {
    const width = Math.max(1, this.container.clientWidth);
    const height = Math.max(1, this.container.clientHeight);
    if (this.renderer.xr.isPresenting) return;
    this.renderer.setSize(width, height, false);
    this.camera.aspect = width / height;
    this.camera.updateProjectionMatrix();
    this.dirty = true;
  }
}
