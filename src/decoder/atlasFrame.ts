/**
 * A decoded frame before reconstruction: the occupancy, geometry and attribute pictures of every
 * map, the patches and the block-to-patch map. This is what the GPU reconstruction
 * (src/render/atlasReconstruction.ts) turns into points in a vertex shader, so the worker does no
 * per-point work and the main thread uploads pictures instead of point arrays.
 */
import type { ReconstructionParams, VideoStream, VpccDecoder } from './vpcc';

/** One picture plane, uint16 samples at the stream's nominal bit depth, row-major, no padding. */
export interface AtlasPlane {
  width: number;
  height: number;
  samples: Uint16Array;
}

export interface AtlasAttribute {
  y: AtlasPlane;
  u: AtlasPlane;
  v: AtlasPlane;
  /** Nominal bit depth (8-bit pictures are normalised by 255, deeper ones by 1023, as TMC2 does). */
  bitDepth: number;
}

export interface AtlasFrame {
  params: ReconstructionParams;
  occupancy: AtlasPlane;
  /** Per map. */
  geometry: AtlasPlane[];
  /** Per map; empty without an attribute. */
  attribute: AtlasAttribute[];
  /** 20 int32 per patch (vpcc::PatchRecord). */
  patches: Int32Array;
  /** Per packing block over the atlas: 0 or 1 + patch index. */
  blockToPatch: Uint32Array;
  blocksWide: number;
}

export const PATCH_RECORD_INTS = 20;

function copyPlane(decoder: VpccDecoder, stream: number, index: number, plane: number): AtlasPlane {
  const p = decoder.plane(stream, index, plane);
  return { width: p.width, height: p.height, samples: p.samples.slice() };
}

/** Where picture `map` of `frame` is: the stream and the picture index in it. */
function pictureOf(streams: VideoStream[], component: VideoStream['component'], frame: number, map: number): { stream: number; index: number } {
  for (const s of streams) {
    if (s.component !== component) continue;
    const framesInStream = s.pictureCount / s.picturesPerFrame;
    if (frame < s.firstFrame || frame >= s.firstFrame + framesInStream) continue;
    if (s.picturesPerFrame > 1) return { stream: s.index, index: (frame - s.firstFrame) * s.picturesPerFrame + map };
    if (s.map === map) return { stream: s.index, index: frame - s.firstFrame };
  }
  throw new Error(`no ${component} picture for frame ${frame} map ${map}`);
}

/** Copies a frame's pictures and atlas out of wasm memory (its pictures must all be in). */
export function exportAtlasFrame(decoder: VpccDecoder, streams: VideoStream[], frame: number): AtlasFrame {
  const params = decoder.reconstructionParams(frame);
  const occ = pictureOf(streams, 'occupancy', frame, 0);
  const occupancy = copyPlane(decoder, occ.stream, occ.index, 0);
  const geometry: AtlasPlane[] = [];
  const attribute: AtlasAttribute[] = [];
  for (let m = 0; m < params.mapCount; m++) {
    const g = pictureOf(streams, 'geometry', frame, m);
    geometry.push(copyPlane(decoder, g.stream, g.index, 0));
    if (params.hasAttribute) {
      const a = pictureOf(streams, 'attribute', frame, m);
      attribute.push({
        y: copyPlane(decoder, a.stream, a.index, 0), u: copyPlane(decoder, a.stream, a.index, 1), v: copyPlane(decoder, a.stream, a.index, 2),
        bitDepth: streams[a.stream].bitDepth,
      });
    }
  }
  const patches = decoder.patches(frame).slice();
  const b2p = decoder.blockToPatch(frame);
  return { params, occupancy, geometry, attribute, patches, blockToPatch: b2p.map.slice(), blocksWide: b2p.blocksWide };
}

/** The buffers of a frame, to transfer it between threads without copies. */
export function atlasFrameBuffers(frame: AtlasFrame): ArrayBuffer[] {
  const planes = [frame.occupancy, ...frame.geometry, ...frame.attribute.flatMap((a) => [a.y, a.u, a.v])];
  return [...planes.map((p) => p.samples.buffer as ArrayBuffer), frame.patches.buffer as ArrayBuffer, frame.blockToPatch.buffer as ArrayBuffer];
}
