/**
 * The one way decoded video enters the vpcc core module, whichever decoder made it: a
 * `DecodedPicture` (a WebCodecs `VideoFrame`, or a picture of the optional HEVC module) is copied
 * once into wasm memory and handed over with `putPicture`, which converts it to the component's
 * nominal bit depth. The segment decoder asks "a video decoder" for pictures and never needs to
 * know which one it got.
 */
import type { VideoStream, VpccDecoder } from './vpcc';

/** A decoded picture in its decoder's memory, described as `putPicture` takes it. */
export interface DecodedPicture {
  /** Visible size in luma samples. */
  width: number;
  height: number;
  /** Allocated size (at least the visible size): what the size limit is checked against. */
  codedWidth: number;
  codedHeight: number;
  bytesPerSample: 1 | 2;
  /** Bits of each sample the decoder filled (8, 10, 12…). */
  bitDepth: number;
  chroma444: boolean;
  /** 4:2:0 chroma as one plane of U,V pairs (NV12, what hardware decoders give). */
  chromaInterleaved: boolean;
  /** Bytes `copyTo` writes. */
  byteLength: number;
  /** Copies the planes into `target`; gives each plane's byte offset in it and stride in samples. */
  copyTo(target: Uint8Array): Promise<{ offset: number; stride: number }[]>;
  /** Releases the picture in its decoder (a VideoFrame must be closed). */
  close(): void;
}

/** The pictures of one video sub-bitstream in output order, decoded one per `next` call. */
export interface PictureStream {
  /** The next picture (valid until the following call), or null at the end. Throws on bad video. */
  next(): DecodedPicture | null;
  /** Frees what the stream holds. */
  close(): void;
}

/** A decoder that pulls pictures from a sub-bitstream (the HEVC module). */
export interface StreamDecoder {
  open(lengthPrefixed: Uint8Array): PictureStream;
}

/**
 * The default of `maxAtlasSize` (pool, worker and `decodeSegment`): 4096 × 4096. A 16-bit plane
 * of that is 32 MiB, and the module keeps a few planes per frame in flight; the module itself
 * parses atlases up to 16384², whose planes are 512 MiB each, and wasm memory, once grown, never
 * shrinks. Our packager's atlases and those of the MPEG common test conditions are 2048 wide or
 * less.
 */
export const DEFAULT_MAX_ATLAS_SIZE = 4096;

/** A picture or atlas larger than the player decodes. */
export class AtlasTooLargeError extends Error {
  override name = 'AtlasTooLargeError';
}

/** Throws AtlasTooLargeError when `picture` is larger than `maxSize` on a side (before any copy of it). */
export function checkPictureSize(stream: VideoStream, picture: DecodedPicture, maxSize: number): void {
  if (picture.codedWidth > maxSize || picture.codedHeight > maxSize) {
    throw new AtlasTooLargeError(`${stream.component} picture of ${picture.codedWidth}×${picture.codedHeight} is larger than the ${maxSize}×${maxSize} this player decodes`);
  }
}

/**
 * Copies `picture` into the core module's memory and stores it as picture `index` of `stream`.
 * Refuses a picture larger than `maxSize` on a side before the copy grows wasm memory for it
 * (the module checks it against the atlas only once it is in).
 */
export async function putDecodedPicture(decoder: VpccDecoder, stream: VideoStream, index: number, picture: DecodedPicture, maxSize: number): Promise<void> {
  checkPictureSize(stream, picture, maxSize);
  const size = picture.byteLength;
  const ptr = decoder.pictureBuffer(size);
  // Straight into wasm memory (the view is made after pictureBuffer, which may grow the heap).
  const layout = await picture.copyTo(new Uint8Array(decoder.module.HEAPU8.buffer, ptr, size));
  const plane = (i: number) => {
    const at = layout[Math.min(i, layout.length - 1)];
    return { ptr: ptr + at.offset, stride: at.stride };
  };
  decoder.putPicture(stream.index, index, {
    width: picture.width,
    height: picture.height,
    bytesPerSample: picture.bytesPerSample,
    decodedBitDepth: picture.bitDepth,
    chroma444: picture.chroma444,
    chromaInterleaved: picture.chromaInterleaved,
    planes: [plane(0), plane(1), plane(2)],
  });
}
