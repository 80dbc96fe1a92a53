/**
 * Renderer benchmark page (docs/benchmarks.md "Renderer"): the real `SceneRenderer` drawing
 * synthetic point clouds of a chosen size — four objects side by side, each a solid ball of
 * points on the voxel grid — so frame time can be measured at 0.5 / 1 / 2 M points without a
 * decoder in the loop. Driven by e2e/bench/render-frame-time.ts through `window.holoquicRenderBench`.
 */
import type { PointFrame } from '../../src/model/frames';
import type { SceneModel, SceneObject } from '../../src/model/scene';
import { SceneRenderer } from '../../src/render/sceneRenderer';
import type { SplatShape } from '../../src/render/pointMaterial';

const OBJECTS = 4;
const SCALE = 0.002;

/** A ball of `count` points in a 1024³ voxel grid, coloured by position; `phase` shifts it per frame. */
function ballFrame(count: number, phase: number): PointFrame {
  const positions = new Int16Array(count * 3);
  const colors = new Uint8Array(count * 3);
  const golden = Math.PI * (3 - Math.sqrt(5));
  for (let i = 0; i < count; i++) {
    // Points spread over nested spherical shells (Fibonacci lattice), a dense filled ball.
    const r = 400 * Math.cbrt((i + 0.5) / count);
    // Direction decorrelated from the radius (golden-ratio stride), so every shell is a full sphere.
    const y = 1 - 2 * ((i * 0.6180339887498949) % 1);
    const ring = Math.sqrt(1 - y * y);
    const a = i * golden + phase;
    positions[i * 3] = 512 + r * ring * Math.cos(a);
    positions[i * 3 + 1] = 512 + r * y;
    positions[i * 3 + 2] = 512 + r * ring * Math.sin(a);
    colors[i * 3] = 64 + (positions[i * 3] >> 3);
    colors[i * 3 + 1] = 64 + (positions[i * 3 + 1] >> 3);
    colors[i * 3 + 2] = 200;
  }
  return { count, positions, colors };
}

function benchScene(pointsPerObject: number): SceneModel {
  const objects: SceneObject[] = [];
  for (let i = 0; i < OBJECTS; i++) {
    const x = (i - (OBJECTS - 1) / 2) * 2.4;
    objects.push({
      id: `ball-${i}`, codecs: 'synthetic', position: [x - 1.024, 0, -1.024], rotation: [0, 0, 0, 1], scale: SCALE,
      bbox: { min: [x - 1.024, 0, -1.024], max: [x + 1.024, 2.048, 1.024] },
      representations: [{ id: '0', rank: 0, bandwidth: 1, avgBandwidth: 1, pointsPerFrame: pointsPerObject }],
      loopSegments: 1, playMode: 'loop', startNumber: 1, mediaTemplate: '',
    });
  }
  return { scene: 'render-bench', segmentDuration: 1, passDuration: 1, objects };
}

export interface RenderBenchResult {
  points: number;
  frames: number;
  /** Mean wall time per frame including the GPU finishing it (one-pixel read-back). */
  meanMs: number;
  p95Ms: number;
  /** Same, for frames that also upload a new content frame per object. */
  uploadMeanMs: number;
  width: number;
  height: number;
  renderer: string;
}

const view = document.getElementById('view')!;
let renderer: SceneRenderer | null = null;

async function run(options: { points: number; frames?: number; splat?: SplatShape }): Promise<RenderBenchResult> {
  renderer?.dispose();
  const perObject = Math.round(options.points / OBJECTS);
  const scene = benchScene(perObject);
  renderer = new SceneRenderer(view, { splat: options.splat ?? 'round' });
  renderer.setScene(scene);
  const sets = [0, 1].map((phase) => new Map(scene.objects.map((o) => [o.id, { frame: ballFrame(perObject, phase * 0.01) }])));
  let current = sets[0];
  renderer.setFrameSource(() => current);
  const gl = renderer.renderer.getContext();
  const pixel = new Uint8Array(4);
  const timeFrame = (): number => {
    const t0 = performance.now();
    renderer!.renderOnce();
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
    return performance.now() - t0;
  };
  const frames = options.frames ?? 20;
  timeFrame(); // first frame compiles the shader and uploads
  const still: number[] = [];
  for (let i = 0; i < frames; i++) still.push(timeFrame());
  const moving: number[] = [];
  for (let i = 0; i < frames; i++) {
    current = sets[(i + 1) % 2];
    moving.push(timeFrame());
  }
  still.sort((a, b) => a - b);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const debug = gl.getExtension('WEBGL_debug_renderer_info');
  return {
    points: perObject * OBJECTS, frames,
    meanMs: mean(still), p95Ms: still[Math.min(still.length - 1, Math.floor(still.length * 0.95))],
    uploadMeanMs: mean(moving),
    width: gl.drawingBufferWidth, height: gl.drawingBufferHeight,
    renderer: debug ? String(gl.getParameter(debug.UNMASKED_RENDERER_WEBGL)) : String(gl.getParameter(gl.RENDERER)),
  };
}

declare global {
  interface Window {
    holoquicRenderBench: { run: typeof run };
  }
}

window.holoquicRenderBench = { run };
