/**
 * What the playout loop needs from the V-PCC decoder: bytes of one object's segment in, decoded
 * frames out (or a clear error). The decode worker pool (src/decoder/, issue 6) implements it on
 * the wasm `vpcc` library; the loop never knows how.
 */

import type { AtlasFrame } from '../decoder/atlasFrame';

export interface DecodeJob {
  objectId: string;
  /** Timeline segment number. */
  segment: number;
  quality: number;
  bytes: Uint8Array;
  /** Withdraws the job if it has not started (the segment was shown meanwhile). */
  signal?: AbortSignal;
}

/**
 * One decoded point-cloud frame, as the renderer consumes it. Positions are in the object's voxel
 * units (the MPD's `hq:scale` and placement turn them into scene metres).
 */
export interface PointFrame {
  /** Number of points. */
  count: number;
  /** x, y, z per point (length 3·count). */
  positions: Int16Array;
  /** r, g, b per point, 8-bit (length 3·count). */
  colors: Uint8Array;
}

/**
 * A decoded frame: reconstructed points, or the pictures and atlas the renderer reconstructs on
 * the GPU (src/decoder/atlasFrame.ts), depending on what the decoder was asked for.
 */
export type DecodedFrame = PointFrame | AtlasFrame;

/** Points of a frame (for an atlas frame, at most this many). */
export function framePoints(frame: DecodedFrame): number {
  return 'kind' in frame ? frame.maxPoints : frame.count;
}

/** The frame as points; throws for an atlas frame (for callers that asked for points). */
export function pointsOf(frame: DecodedFrame): PointFrame {
  if ('kind' in frame) throw new Error('expected reconstructed points, got an atlas frame');
  return frame;
}

export interface DecodedSegment {
  /** Decoded point-cloud frames (30 for a 1-s segment), in presentation order. */
  frames: DecodedFrame[];
  /** Wall time the decode took, in milliseconds. */
  decodeMs: number;
}

export interface SegmentDecoder {
  /** Segments it decodes at the same time (its workers); the playout loop budgets decode time by it. */
  readonly parallelism?: number;
  /** Rejects with an Error whose message says what was wrong with the bytes. */
  decode(job: DecodeJob): Promise<DecodedSegment>;
}
