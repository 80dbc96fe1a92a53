/**
 * The decoder check page (decoder.html): decodes a segment fetched from this origin through the
 * decoder pool and shows what came out. The end-to-end tests drive it via
 * `window.holoquicDecoderTest`.
 */
import { GlAtlasReconstructor } from '../../src/render/atlasReconstruction';
import { comparePointSets, type PointSetDifference } from '../../src/render/pointCompare';
import { pointsOf } from '../../src/model/frames';
import { createDecoderPool, type CoreModuleInfo } from '../../src/decoder/index';

export interface DecoderTestResult {
  error?: string;
  /** Points per frame. */
  points?: number[];
  /** TMC2 frame MD5 per frame (of the frames the renderer gets). */
  md5?: string[];
  /** Positions and colours of every frame have the lengths its point count says. */
  wellFormed?: boolean;
  decodeMs?: number;
  frameMs?: number[];
  /** Worker time handing decoded pictures into wasm memory, whole segment. */
  pictureMs?: number;
  /** Who decoded the video. */
  videoDecoder?: 'webcodecs' | 'hevc-module';
  /** Which core module build reconstructed, and on how many threads. */
  core?: CoreModuleInfo;
  /** Whether this page is cross-origin isolated. */
  crossOriginIsolated?: boolean;
}

/** GPU reconstruction of a segment's frames against the CPU reconstruction (no post-processing). */
export interface GpuCompareResult {
  error?: string;
  frames?: Array<PointSetDifference & { gpuMs: number; postProcessing: number; atlas: { width: number; height: number; maps: number } }>;
  /** CPU time per frame of the worker's reconstruction without post-processing (ms). */
  cpuFrameMs?: number[];
}

declare global {
  interface Window {
    holoquicDecoderTest: {
      /** Decodes the segment at `path` (or given bytes) through the pool. */
      decode(path: string, options?: { corruptAt?: number[] }): Promise<DecoderTestResult>;
      gpuCompare(path: string, options?: { frames?: number }): Promise<GpuCompareResult>;
    };
  }
}

const pool = createDecoderPool();

async function decode(path: string, options: { corruptAt?: number[] } = {}): Promise<DecoderTestResult> {
  try {
    const response = await fetch(path);
    if (!response.ok) return { error: `HTTP ${response.status} for ${path}` };
    const bytes = new Uint8Array(await response.arrayBuffer());
    // Corruption for robustness tests: flip the bytes at the given offsets.
    for (const at of options.corruptAt ?? []) if (at < bytes.length) bytes[at] ^= 0xff;
    const segment = await pool.decodeDetailed(bytes, { md5: true });
    const points = segment.frames.map(pointsOf);
    const wellFormed = points.every((f) => f.positions.length === f.count * 3 && f.colors.length === f.count * 3);
    return {
      points: points.map((f) => f.count),
      md5: segment.md5,
      wellFormed,
      decodeMs: segment.decodeMs,
      frameMs: segment.timing.frameMs,
      pictureMs: segment.timing.pictureMs,
      videoDecoder: segment.timing.videoDecoder,
      core: segment.timing.core,
      crossOriginIsolated: globalThis.crossOriginIsolated,
    };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

async function gpuCompare(path: string, options: { frames?: number } = {}): Promise<GpuCompareResult> {
  try {
    const response = await fetch(path);
    if (!response.ok) return { error: `HTTP ${response.status} for ${path}` };
    const segment = await pool.decodeDetailed(new Uint8Array(await response.arrayBuffer()), { output: 'both', postProcess: false });
    const gl = document.createElement('canvas').getContext('webgl2');
    if (!gl) return { error: 'no WebGL2' };
    const gpu = new GlAtlasReconstructor(gl);
    const frames: NonNullable<GpuCompareResult['frames']> = [];
    const n = Math.min(options.frames ?? Infinity, segment.frames.length);
    for (let f = 0; f < n; f++) {
      const atlas = segment.atlasFrames![f];
      const t0 = performance.now();
      const points = gpu.reconstruct(atlas);
      const gpuMs = performance.now() - t0;
      frames.push({
        ...comparePointSets(pointsOf(segment.frames[f]), points), gpuMs, postProcessing: atlas.params.postProcessing,
        atlas: { width: atlas.params.atlasWidth, height: atlas.params.atlasHeight, maps: atlas.params.mapCount },
      });
    }
    gpu.dispose();
    return { frames, cpuFrameMs: segment.timing.frameMs.slice(0, n) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

window.holoquicDecoderTest = { decode, gpuCompare };

const form = document.querySelector<HTMLFormElement>('#decode');
form?.addEventListener('submit', async (event) => {
  event.preventDefault();
  const out = document.querySelector('#out')!;
  out.textContent = 'decoding…';
  const r = await decode(document.querySelector<HTMLInputElement>('#path')!.value);
  out.textContent = r.error
    ? `error: ${r.error}`
    : r.points!.map((n, i) => `frame ${i}: ${n} points, md5 ${r.md5![i]}, ${r.frameMs![i].toFixed(1)} ms`).join('\n') +
      `\nsegment: ${r.decodeMs!.toFixed(0)} ms`;
});
