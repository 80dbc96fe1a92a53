/**
 * What the playout loop needs from the V-PCC decoder: bytes of one object's segment in, decoded
 * frames out (or a clear error). The decode worker pool (src/decoder/, issue 6) implements it on
 * the wasm `vpcc` library; the loop never knows how.
 */

export interface DecodeJob {
  objectId: string;
  /** Timeline segment number. */
  segment: number;
  quality: number;
  bytes: Uint8Array;
}

export interface DecodedSegment {
  /** Decoded point-cloud frames (30 for a 1-s segment), ready for the renderer. */
  frames: unknown[];
  /** Wall time the decode took, in milliseconds. */
  decodeMs: number;
}

export interface SegmentDecoder {
  /** Rejects with an Error whose message says what was wrong with the bytes. */
  decode(job: DecodeJob): Promise<DecodedSegment>;
}
