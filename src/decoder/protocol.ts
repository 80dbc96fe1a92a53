/** Messages between the decoder pool (main thread) and a decode worker. */
import type { DecodedFrame, AtlasFrame } from '../model/frames';
import type { HevcModuleLocation } from './hevc';
import type { DecodeOutput, SegmentTiming } from './segment';

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
  /** Largest atlas width and height taken (default `DEFAULT_MAX_ATLAS_SIZE`). */
  maxAtlasSize?: number;
  /** The V3C level the manifest declares for the segment (`ptl_level_idc`; absent: none). */
  v3cLevelIdc?: number;
  /** Where the optional HEVC module is, loaded only if this segment needs it (absent: none). */
  hevcModule?: HevcModuleLocation;
}

export type ToWorker = DecodeRequest;

/**
 * `memoryBytes` on every answer: the wasm memory the worker holds then — the core module's and,
 * once loaded, the HEVC module's. Wasm memory never shrinks, so it is the most the worker has
 * needed for one segment so far (the pool's stats add the workers up).
 */
export interface DecodeResult {
  type: 'decoded';
  id: number;
  memoryBytes: number;
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
  memoryBytes: number;
  message: string;
  /**
   * Set when the worker cannot be trusted with another segment. 'unloadable': its wasm module
   * never loaded (a new worker would fail the same way). 'crashed': the module trapped or aborted
   * mid-decode, leaving its heap in an unknown state (a new worker starts clean).
   */
  worker?: 'unloadable' | 'crashed';
}

export type FromWorker = DecodeResult | DecodeFailure;
