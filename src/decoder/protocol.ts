/** Messages between the decoder pool (main thread) and a decode worker. */
import type { DecodedFrame, AtlasFrame } from '../model/frames';
import type { DecodeOutput } from './segment';

export interface DecodeRequest {
  type: 'decode';
  id: number;
  /** The segment (its buffer is transferred to the worker). */
  bytes: Uint8Array;
  /** Also return TMC2's frame MD5 of every frame (tests, conformance checks). */
  md5?: boolean;
  /** Points (default), pictures + atlas for GPU reconstruction, or both. */
  output?: DecodeOutput;
  /** CPU reconstruction without the stream's post-processing (default: with it). */
  postProcess?: boolean;
}

export type ToWorker = DecodeRequest;

/** Where a segment's decode time went, in milliseconds. */
export interface SegmentTiming {
  /** Wall time in the worker, from the bytes to the last frame. */
  totalMs: number;
  /** Parsing + atlas decoding (wasm). */
  parseMs: number;
  /**
   * Per frame: reconstruction + post-processing + copy out of wasm memory, or the copy of the
   * pictures and atlas for the GPU (output 'both': the CPU reconstruction alone).
   */
  frameMs: number[];
  /**
   * All decoded pictures: VideoFrame.copyTo into wasm memory + bit-depth conversion; with the
   * module's own decoder, the decoding itself too.
   */
  pictureMs: number;
  /** Who decoded the video: the browser's WebCodecs, or the wasm module (HEVC without WebCodecs). */
  videoDecoder: 'webcodecs' | 'wasm';
}

export interface DecodeResult {
  type: 'decoded';
  id: number;
  /** Buffers of positions and colours are transferred, not copied. */
  frames: DecodedFrame[];
  /** With output 'both'; buffers transferred too. */
  atlasFrames?: AtlasFrame[];
  md5?: string[];
  timing: SegmentTiming;
}

export interface DecodeFailure {
  type: 'failed';
  id: number;
  message: string;
  /**
   * Set when the worker cannot be trusted with another segment. 'unloadable': its wasm module
   * never loaded (a new worker would fail the same way). 'crashed': the module trapped or aborted
   * mid-decode, leaving its heap in an unknown state (a new worker starts clean).
   */
  worker?: 'unloadable' | 'crashed';
}

export type FromWorker = DecodeResult | DecodeFailure;
