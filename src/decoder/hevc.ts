/**
 * The optional HEVC module (`vpcc-hevc.mjs` + `vpcc-hevc.wasm`, wasm/include/vpcc/api_hevc.h):
 * libde265 (LGPL-3.0) in a WebAssembly module of its own, kept out of the MIT core so that an
 * application that never meets HEVC — or whose browser decodes it with WebCodecs — never
 * downloads or runs it. `HevcDecoder` opens one `PictureStream` per HEVC sub-bitstream; each
 * picture stays in the HEVC module's memory until `putDecodedPicture` copies it into the core.
 */
import type { DecodedPicture, PictureStream, StreamDecoder } from './picture';
import { VpccError, VpccStatus } from './vpcc';

/** The exports of `vpcc-hevc.mjs` this file uses. */
export interface HevcModule {
  HEAPU8: Uint8Array;
  UTF8ToString(ptr: number): string;
  _vpcc_hevc_create(): number;
  _vpcc_hevc_destroy(h: number): void;
  _vpcc_hevc_last_status(h: number): number;
  _vpcc_hevc_last_error(h: number): number;
  _vpcc_hevc_input(h: number, size: number): number;
  _vpcc_hevc_start(h: number, size: number): number;
  _vpcc_hevc_next(h: number): number;
  _vpcc_hevc_current_picture(h: number): number;
}

/** The module factory `vpcc-hevc.mjs` exports by default. */
export type HevcModuleFactory = (options: {
  locateFile?: (path: string) => string;
  wasmBinary?: ArrayBuffer | Uint8Array;
}) => Promise<HevcModule>;

/** Where the HEVC module is: its loader and its wasm (absolute URLs), and its licence's. */
export interface HevcModuleLocation {
  moduleUrl: string;
  wasmUrl: string;
  /** The LGPL notice beside the module (never fetched by the player). */
  licenceUrl?: string;
}

/** Loads the HEVC module from its URLs (a dynamic import: fetched now, not before). */
export async function loadHevcModule(location: HevcModuleLocation): Promise<HevcDecoder> {
  const factory = (await import(/* @vite-ignore */ location.moduleUrl)).default as HevcModuleFactory;
  return new HevcDecoder(await factory({ locateFile: () => location.wasmUrl }));
}

export class HevcDecoder implements StreamDecoder {
  constructor(readonly module: HevcModule) {}

  open(lengthPrefixed: Uint8Array): PictureStream {
    return new HevcStream(this.module, lengthPrefixed);
  }
}

class HevcStream implements PictureStream {
  private handle: number;

  constructor(
    private readonly module: HevcModule,
    lengthPrefixed: Uint8Array,
  ) {
    this.handle = module._vpcc_hevc_create();
    if (!this.handle) throw new VpccError(VpccStatus.memory, 'HEVC: cannot create a decoder');
    try {
      const ptr = module._vpcc_hevc_input(this.handle, lengthPrefixed.length);
      if (!ptr && lengthPrefixed.length) this.fail();
      module.HEAPU8.set(lengthPrefixed, ptr);
      if (module._vpcc_hevc_start(this.handle, lengthPrefixed.length) < 0) this.fail();
    } catch (e) {
      this.close();
      throw e;
    }
  }

  next(): DecodedPicture | null {
    if (!this.handle) throw new VpccError(VpccStatus.argument, 'HEVC: stream closed');
    const got = this.module._vpcc_hevc_next(this.handle);
    if (got < 0) this.fail();
    if (got === 0) return null;
    const at = this.module._vpcc_hevc_current_picture(this.handle) >>> 2;
    const u32 = new Uint32Array(this.module.HEAPU8.buffer);
    const [width, height, chroma444, bitDepth, bytesPerSample, y, yStride, u, uStride, v, vStride] = u32.subarray(at, at + 11);
    const chromaHeight = chroma444 ? height : Math.ceil(height / 2);
    const planes = [
      { ptr: y, bytes: yStride * bytesPerSample * height, stride: yStride },
      { ptr: u, bytes: uStride * bytesPerSample * chromaHeight, stride: uStride },
      { ptr: v, bytes: vStride * bytesPerSample * chromaHeight, stride: vStride },
    ];
    const module = this.module;
    return {
      width, height, codedWidth: width, codedHeight: height,
      bytesPerSample: bytesPerSample === 2 ? 2 : 1, bitDepth, chroma444: chroma444 === 1, chromaInterleaved: false,
      byteLength: planes.reduce((sum, p) => sum + p.bytes, 0),
      copyTo: (target) => {
        // The heap is read at copy time: nothing runs in the HEVC module between next() and here.
        let offset = 0;
        const layout = planes.map((p) => {
          target.set(module.HEAPU8.subarray(p.ptr, p.ptr + p.bytes), offset);
          const plane = { offset, stride: p.stride };
          offset += p.bytes;
          return plane;
        });
        return Promise.resolve(layout);
      },
      close: () => {},
    };
  }

  close(): void {
    if (this.handle) this.module._vpcc_hevc_destroy(this.handle);
    this.handle = 0;
  }

  private fail(): never {
    const status = this.module._vpcc_hevc_last_status(this.handle);
    throw new VpccError(status, this.module.UTF8ToString(this.module._vpcc_hevc_last_error(this.handle)));
  }
}
