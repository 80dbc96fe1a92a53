/**
 * A decoded frame before reconstruction: the occupancy, geometry and attribute pictures of every
 * map, the patches and the block-to-patch map. This is what the GPU reconstruction
 * (src/render/atlasReconstruction.ts) turns into points in a vertex shader, so the worker does no
 * per-point work and the main thread uploads pictures instead of point arrays.
 */
import type { AtlasAttribute, AtlasFrame, AtlasPlane, ReconstructionParams } from '../model/frames';
import type { VideoStream, VpccDecoder } from './vpcc';


function copyPlane(decoder: VpccDecoder, streams: VideoStream[], stream: number, index: number, plane: number): AtlasPlane {
  const p = decoder.plane(stream, index, plane);
  const samples = streams[stream].bitDepth <= 8 ? Uint8Array.from(p.samples) : p.samples.slice();
  return { width: p.width, height: p.height, samples };
}

/** Where picture `map` of `frame` is: the stream and the picture index in it. */
function pictureOf(streams: VideoStream[], component: VideoStream['component'], frame: number, map: number): { stream: number; index: number } {
  for (const s of streams) {
    if (s.component !== component || s.auxiliary) continue;
    const framesInStream = s.pictureCount / s.picturesPerFrame;
    if (frame < s.firstFrame || frame >= s.firstFrame + framesInStream) continue;
    if (s.picturesPerFrame > 1) return { stream: s.index, index: (frame - s.firstFrame) * s.picturesPerFrame + map };
    if (s.map === map) return { stream: s.index, index: frame - s.firstFrame };
  }
  throw new Error(`no ${component} picture for frame ${frame} map ${map}`);
}

/** Copies a frame's pictures and atlas out of wasm memory (its pictures must all be in). */
export function exportAtlasFrame(
  decoder: VpccDecoder, streams: VideoStream[], frame: number, params = decoder.reconstructionParams(frame),
): AtlasFrame {
  const occ = pictureOf(streams, 'occupancy', frame, 0);
  const occupancy = copyPlane(decoder, streams, occ.stream, occ.index, 0);
  const geometry: AtlasPlane[] = [];
  const attribute: AtlasAttribute[] = [];
  for (let m = 0; m < params.mapCount; m++) {
    const g = pictureOf(streams, 'geometry', frame, m);
    geometry.push(copyPlane(decoder, streams, g.stream, g.index, 0));
    if (params.hasAttribute) {
      const a = pictureOf(streams, 'attribute', frame, m);
      attribute.push({
        y: copyPlane(decoder, streams, a.stream, a.index, 0), u: copyPlane(decoder, streams, a.stream, a.index, 1), v: copyPlane(decoder, streams, a.stream, a.index, 2),
        bitDepth: streams[a.stream].bitDepth,
      });
    }
  }
  const patches = decoder.patches(frame).slice();
  const b2p = decoder.blockToPatch(frame);
  const blockToPatch = b2p.map.slice();
  const maxPoints = occupiedPixels(params, occupancy, blockToPatch, b2p.blocksWide) * params.mapCount;
  return { kind: 'atlas', params, maxPoints, occupancy, geometry, attribute, patches, blockToPatch, blocksWide: b2p.blocksWide };
}

/** Pixels that are occupied and inside a patch block (occupancy samples × precision²). */
function occupiedPixels(params: ReconstructionParams, occupancy: AtlasPlane, blockToPatch: Uint32Array, blocksWide: number): number {
  const precision = Math.max(1, Math.round(params.atlasWidth / occupancy.width));
  let count = 0;
  for (let y = 0; y < occupancy.height; y++) {
    const blockRow = Math.floor((y * precision) / params.blockSize) * blocksWide;
    for (let x = 0; x < occupancy.width; x++) {
      if (occupancy.samples[y * occupancy.width + x] > params.lossyThreshold && blockToPatch[blockRow + Math.floor((x * precision) / params.blockSize)] !== 0) count++;
    }
  }
  return count * precision * precision;
}

/** The buffers of a frame, to transfer it between threads without copies. */
export function atlasFrameBuffers(frame: AtlasFrame): ArrayBuffer[] {
  const planes = [frame.occupancy, ...frame.geometry, ...frame.attribute.flatMap((a) => [a.y, a.u, a.v])];
  return [...planes.map((p) => p.samples.buffer as ArrayBuffer), frame.patches.buffer as ArrayBuffer, frame.blockToPatch.buffer as ArrayBuffer];
}
