/**
 * Typed access to the vpcc WebAssembly module (wasm/include/vpcc/api.h), the MIT core: one
 * `VpccDecoder` per worker decodes one segment at a time, with video decoding done by the caller
 * (WebCodecs or the optional HEVC module in the browser, pictures dumped by the native build in
 * Node tests).
 *
 * Views returned by `reconstruct` and the atlas getters point into wasm memory: they stay valid
 * until the next call on the same decoder (a call may grow the memory, which detaches them).
 */
import type { ReconstructionParams } from '../model/frames';

/** The exports of `vpcc.mjs` this file uses (emscripten names them with a leading underscore). */
export interface VpccModule {
  HEAPU8: Uint8Array;
  UTF8ToString(ptr: number): string;
  /** 1 in the single-threaded build; 1 + helper threads in the threaded one (coreModule.ts). */
  _vpcc_threads(): number;
  _vpcc_create(): number;
  _vpcc_destroy(d: number): void;
  _vpcc_last_status(d: number): number;
  _vpcc_last_error(d: number): number;
  _vpcc_set_manifest_level(d: number, levelIdc: number): number;
  _vpcc_segment_buffer(d: number, size: number): number;
  _vpcc_load(d: number, size: number): number;
  _vpcc_frame_count(d: number): number;
  _vpcc_stream_count(d: number): number;
  _vpcc_stream(d: number, i: number): number;
  _vpcc_picture_buffer(d: number, size: number): number;
  _vpcc_put_picture(
    d: number, stream: number, index: number, width: number, height: number, bytesPerSample: number,
    decodedBitDepth: number, chromaLayout: number, y: number, yStride: number, u: number, uStride: number,
    v: number, vStride: number,
  ): number;
  _vpcc_frame_ready(d: number, frame: number): number;
  _vpcc_reconstruct(d: number, frame: number, flags: number): number;
  _vpcc_point_count(d: number): number;
  _vpcc_positions(d: number): number;
  _vpcc_colors(d: number): number;
  _vpcc_frame_md5(d: number): number;
  _vpcc_release_frame(d: number, frame: number): number;
  _vpcc_result_length(d: number): number;
  _vpcc_patches(d: number, frame: number): number;
  _vpcc_block_to_patch(d: number, frame: number): number;
  _vpcc_reconstruction_params(d: number, frame: number): number;
  _vpcc_block_size(d: number, frame: number): number;
  _vpcc_atlas_width(d: number, frame: number): number;
  _vpcc_atlas_height(d: number, frame: number): number;
  _vpcc_plane(d: number, stream: number, index: number, plane: number): number;
  _vpcc_plane_width(d: number, stream: number, index: number, plane: number): number;
  _vpcc_plane_height(d: number, stream: number, index: number, plane: number): number;
  _vpcc_heap_used(): number;
  _vpcc_heap_peak(): number;
}

/** The module factory `vpcc.mjs` exports by default. */
export type VpccModuleFactory = (options: {
  locateFile?: (path: string) => string;
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** The threaded build: the module script its thread workers import. */
  mainScriptUrlOrBlob?: string;
}) => Promise<VpccModule>;

/** Status codes of api.h. */
export const VpccStatus = { ok: 0, argument: 1, bitstream: 2, notReady: 3, memory: 4, internal: 5 } as const;

const statusNames = ['ok', 'invalid argument', 'invalid bitstream', 'pictures missing', 'out of memory', 'internal error'];

/** A failure reported by the wasm decoder: its status code and message. */
export class VpccError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`vpcc: ${statusNames[status] ?? `status ${status}`}: ${message}`);
    this.name = 'VpccError';
  }
}

/**
 * Whether an error says the worker ran out of memory: the module's allocator failed (status
 * `memory`), or an array buffer could not be allocated on the JavaScript side. Wasm memory never
 * shrinks, so such a worker keeps its grown heap: the pool replaces it (a fresh one starts small).
 */
export function isOutOfMemory(e: unknown): boolean {
  if (e instanceof VpccError) return e.status === VpccStatus.memory;
  return e instanceof RangeError && /allocation failed|out of memory/i.test(e.message);
}

export type Component = 'occupancy' | 'geometry' | 'attribute';
const components: Component[] = ['occupancy', 'geometry', 'attribute'];

/** A video sub-bitstream the caller must decode. */
export interface VideoStream {
  index: number;
  sequence: number;
  component: Component;
  map: number;
  /** 2 when two maps alternate in the stream (picture 2f is map 0 of frame f, 2f+1 map 1). */
  picturesPerFrame: number;
  codec: 'avc' | 'hevc';
  /** Nominal bit depth of the component (decoded pictures are converted to it). */
  bitDepth: number;
  pictureCount: number;
  firstFrame: number;
  /** The coded NAL units, each behind a 4-byte big-endian length (a view into wasm memory). */
  data: Uint8Array;
  /** An auxiliary video (raw points' coordinates or colours), of its own picture size. */
  auxiliary: boolean;
}

/** Decoded planes as a video decoder gave them; offsets are byte addresses in wasm memory. */
export interface PictureInWasm {
  width: number;
  height: number;
  bytesPerSample: 1 | 2;
  decodedBitDepth: number;
  chroma444: boolean;
  /**
   * 4:2:0 chroma as one plane of U,V pairs (NV12, what hardware decoders give): planes[1] is that
   * plane (stride in samples, a pair counting two), planes[2] is ignored.
   */
  chromaInterleaved?: boolean;
  /** Address and stride (in samples) of Y, U, V. */
  planes: [{ ptr: number; stride: number }, { ptr: number; stride: number }, { ptr: number; stride: number }];
}


/** A reconstructed frame as views into wasm memory (copy before the next decoder call). */
export interface FrameViews {
  count: number;
  positions: Int16Array;
  colors: Uint8Array;
}

/** Bytes of a module's wasm memory (what the worker holds for it, in use or not). */
export function wasmMemoryBytes(module: { HEAPU8: Uint8Array }): number {
  return module.HEAPU8.buffer.byteLength;
}

/** Bytes in use by the wasm heap (malloc), for memory tests. */
export function heapUsed(module: VpccModule): number {
  return module._vpcc_heap_used() >>> 0;
}

/** The allocator's peak footprint in wasm memory (bytes: in use and free between), for memory tests. */
export function heapPeak(module: VpccModule): number {
  return module._vpcc_heap_peak() >>> 0;
}

export class VpccDecoder {
  private handle: number;

  constructor(readonly module: VpccModule) {
    this.handle = module._vpcc_create();
    if (!this.handle) throw new VpccError(VpccStatus.memory, 'cannot create a decoder');
  }

  /** Frees the decoder and everything it holds. */
  destroy(): void {
    if (this.handle) this.module._vpcc_destroy(this.handle);
    this.handle = 0;
  }

  /**
   * Parses a segment; returns the video streams to decode. Throws VpccError on bad bytes, and on
   * an atlas larger than `manifestLevelIdc` (the V3C level its manifest declares) allows — while
   * parsing, before anything sized by the atlas is allocated.
   */
  load(bytes: Uint8Array, options: { manifestLevelIdc?: number } = {}): VideoStream[] {
    const d = this.live();
    this.check(this.module._vpcc_set_manifest_level(d, options.manifestLevelIdc ?? 0));
    const ptr = this.module._vpcc_segment_buffer(d, bytes.length);
    if (!ptr && bytes.length) this.fail();
    this.module.HEAPU8.set(bytes, ptr);
    this.check(this.module._vpcc_load(d, bytes.length));
    const streams: VideoStream[] = [];
    const count = this.module._vpcc_stream_count(d);
    for (let i = 0; i < count; i++) {
      const at = this.module._vpcc_stream(d, i) >>> 2;
      const u32 = new Uint32Array(this.module.HEAPU8.buffer);
      streams.push({
        index: i,
        sequence: u32[at],
        component: components[u32[at + 1]],
        map: u32[at + 2],
        picturesPerFrame: u32[at + 3],
        codec: u32[at + 4] === 1 ? 'hevc' : 'avc',
        bitDepth: u32[at + 5],
        pictureCount: u32[at + 6],
        firstFrame: u32[at + 7],
        data: this.module.HEAPU8.subarray(u32[at + 8], u32[at + 8] + u32[at + 9]),
        auxiliary: u32[at + 10] === 1,
      });
    }
    return streams;
  }

  get frameCount(): number {
    return this.module._vpcc_frame_count(this.live());
  }

  /** The atlas size of frame `frame` of the loaded segment (its coded sequence's, from the VPS). */
  atlasSize(frame: number): { width: number; height: number } {
    const d = this.live();
    return { width: this.module._vpcc_atlas_width(d, frame) >>> 0, height: this.module._vpcc_atlas_height(d, frame) >>> 0 };
  }

  /** A scratch area in wasm memory of at least `size` bytes to copy decoded planes into. */
  pictureBuffer(size: number): number {
    const ptr = this.module._vpcc_picture_buffer(this.live(), size);
    if (!ptr) this.fail();
    return ptr;
  }

  /** Hands picture `index` (output order) of stream `stream` to the decoder. */
  putPicture(stream: number, index: number, p: PictureInWasm): void {
    const [y, u, v] = p.planes;
    this.check(
      this.module._vpcc_put_picture(
        this.live(), stream, index, p.width, p.height, p.bytesPerSample, p.decodedBitDepth, p.chroma444 ? 1 : p.chromaInterleaved ? 2 : 0,
        y.ptr, y.stride, u.ptr, u.stride, v.ptr, v.stride,
      ),
    );
  }

  frameReady(frame: number): boolean {
    const r = this.module._vpcc_frame_ready(this.live(), frame);
    if (r < 0) this.fail();
    return r === 1;
  }

  /** Reconstructs a frame (post-processed unless told not to) → views into wasm memory. */
  reconstruct(frame: number, options: { postProcess?: boolean } = {}): FrameViews {
    const d = this.live();
    this.check(this.module._vpcc_reconstruct(d, frame, options.postProcess === false ? 1 : 0));
    const count = this.module._vpcc_point_count(d);
    const buffer = this.module.HEAPU8.buffer;
    return {
      count,
      positions: new Int16Array(buffer, this.module._vpcc_positions(d), count * 3),
      colors: new Uint8Array(buffer, this.module._vpcc_colors(d), count * 3),
    };
  }

  /** TMC2's checksum of the last reconstructed frame. */
  frameMd5(): string {
    const ptr = this.module._vpcc_frame_md5(this.live());
    if (!ptr) this.fail();
    return this.module.UTF8ToString(ptr);
  }

  /** Frees the pictures of a frame, and its points when it was the last reconstructed (read them first: `reconstruct`'s views). */
  releaseFrame(frame: number): void {
    this.check(this.module._vpcc_release_frame(this.live(), frame));
  }

  /** Patches of a frame: 20 int32 each (layout of PatchRecord in api_session.h). */
  patches(frame: number): Int32Array {
    const ptr = this.module._vpcc_patches(this.live(), frame);
    if (!ptr) this.fail();
    return new Int32Array(this.module.HEAPU8.buffer, ptr, this.module._vpcc_result_length(this.handle) * 20);
  }

  /** What a per-pixel reconstruction of a frame needs besides pictures and patches. */
  reconstructionParams(frame: number): ReconstructionParams {
    const ptr = this.module._vpcc_reconstruction_params(this.live(), frame);
    if (!ptr) this.fail();
    const v = new Int32Array(this.module.HEAPU8.buffer, ptr, 12);
    return {
      atlasWidth: v[0], atlasHeight: v[1], blockSize: v[2], mapCount: v[3], absoluteD1: v[4] !== 0,
      removeDuplicates: v[5] !== 0, sizeQuantizer: v[6] !== 0, lossyThreshold: v[7], bitDepth3d: v[8],
      hasAttribute: v[9] !== 0, unsupported: v[10], postProcessing: v[11],
    };
  }

  /** Block-to-patch map over the atlas: 0 or 1 + patch index, per packing block. */
  blockToPatch(frame: number): { blockSize: number; blocksWide: number; map: Uint32Array } {
    const d = this.live();
    const ptr = this.module._vpcc_block_to_patch(d, frame);
    if (!ptr) this.fail();
    const length = this.module._vpcc_result_length(d);
    const blockSize = this.module._vpcc_block_size(d, frame);
    const blocksWide = Math.ceil(this.module._vpcc_atlas_width(d, frame) / blockSize);
    return { blockSize, blocksWide, map: new Uint32Array(this.module.HEAPU8.buffer, ptr, length) };
  }

  /** A stored picture's plane (uint16 samples at the nominal bit depth). */
  plane(stream: number, index: number, plane: number): { width: number; height: number; samples: Uint16Array } {
    const d = this.live();
    const ptr = this.module._vpcc_plane(d, stream, index, plane);
    if (!ptr) this.fail();
    const width = this.module._vpcc_plane_width(d, stream, index, plane);
    const height = this.module._vpcc_plane_height(d, stream, index, plane);
    return { width, height, samples: new Uint16Array(this.module.HEAPU8.buffer, ptr, width * height) };
  }

  private live(): number {
    if (!this.handle) throw new VpccError(VpccStatus.argument, 'decoder destroyed');
    return this.handle;
  }

  private check(status: number): void {
    if (status !== VpccStatus.ok) this.fail(status);
  }

  private fail(status = this.module._vpcc_last_status(this.handle)): never {
    throw new VpccError(status, this.module.UTF8ToString(this.module._vpcc_last_error(this.handle)));
  }
}
