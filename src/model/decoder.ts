/**
 * What the playout loop needs from the V-PCC decoder: bytes of one object's segment in, decoded
 * frames out (or a clear error). The decode worker pool (src/decoder/) implements it on the wasm
 * `vpcc` library; the loop never knows how.
 */

import type { DecodedFrame } from './frames';

export interface DecodeJob {
  objectId: string;
  /** Timeline segment number. */
  segment: number;
  quality: number;
  bytes: Uint8Array;
  /**
   * The V3C level the manifest declares for the segment's Representation (`ptl_level_idc`):
   * a segment whose atlas is larger than that level allows fails as a decode error before the
   * decoder allocates anything for it. Undefined: the decoder's own cap alone.
   */
  v3cLevelIdc?: number;
  /** Withdraws the job if it has not started (the segment was shown meanwhile). */
  signal?: AbortSignal;
  /**
   * When the segment is due on screen (its playout deadline), on the caller's clock: a decoder
   * with several jobs waiting starts the one due first. Only compared between jobs, so every
   * caller of one decoder must use the same clock. Undefined: due after every job that has one.
   */
  dueAt?: number;
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
  /**
   * The largest atlas it decodes, in samples (width × height). The player refuses a
   * Representation whose declared V3C level allows larger atlases, before fetching any of it.
   * Undefined: no Representation is refused for its level.
   */
  readonly maxAtlasSamples?: number;
  /** Rejects with an Error whose message says what was wrong with the bytes. */
  decode(job: DecodeJob): Promise<DecodedSegment>;
}
