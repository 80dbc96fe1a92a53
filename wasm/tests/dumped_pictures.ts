/**
 * Pictures that vpcc-dump-pictures decoded natively, handed to the wasm core decoder — in Node
 * (the wasm tests and benchmarks, through wasm_support.ts) and in the browser (the one-decoder
 * benchmark's worker, which gets them packed into one buffer by `packPictures`). Browser-safe:
 * no Node imports here.
 */
import type { VideoStream, VpccDecoder } from '../../src/decoder/vpcc';

export interface DumpedPicture {
  stream: number;
  index: number;
  width: number;
  height: number;
  bitDepth: number;
  chroma444: boolean;
  /** Y, U, V planes one after the other (1 byte per sample up to 8 bits, else 2). */
  samples: Uint8Array;
}

/**
 * Copies a dumped picture into the decoder's scratch buffer and hands it over — planar, or with
 * `nv12` (4:2:0 only) its chroma rewritten as one plane of U,V pairs, as hardware decoders give it.
 */
export function putDumpedPicture(decoder: VpccDecoder, p: DumpedPicture, options: { nv12?: boolean } = {}): void {
  const bytes = p.samples;
  const bytesPerSample = p.bitDepth > 8 ? 2 : 1;
  const chromaWidth = p.chroma444 ? p.width : Math.ceil(p.width / 2);
  const chromaHeight = p.chroma444 ? p.height : Math.ceil(p.height / 2);
  const lumaBytes = p.width * p.height * bytesPerSample, chromaBytes = chromaWidth * chromaHeight * bytesPerSample;
  if (bytes.length !== lumaBytes + 2 * chromaBytes) throw new Error(`picture ${p.stream}/${p.index}: ${bytes.length} bytes, expected ${lumaBytes + 2 * chromaBytes}`);
  const ptr = decoder.pictureBuffer(bytes.length);
  if (options.nv12 && !p.chroma444) {
    if (bytesPerSample !== 1) throw new Error('NV12 is 8-bit');
    const heap = decoder.module.HEAPU8;
    heap.set(bytes.subarray(0, lumaBytes), ptr);
    const u = bytes.subarray(lumaBytes, lumaBytes + chromaBytes), v = bytes.subarray(lumaBytes + chromaBytes);
    for (let i = 0; i < chromaBytes; i++) {
      heap[ptr + lumaBytes + 2 * i] = u[i];
      heap[ptr + lumaBytes + 2 * i + 1] = v[i];
    }
    const pairs = { ptr: ptr + lumaBytes, stride: 2 * chromaWidth };
    decoder.putPicture(p.stream, p.index, {
      width: p.width, height: p.height, bytesPerSample, decodedBitDepth: p.bitDepth, chroma444: false, chromaInterleaved: true,
      planes: [{ ptr, stride: p.width }, pairs, pairs],
    });
    return;
  }
  decoder.module.HEAPU8.set(bytes, ptr);
  decoder.putPicture(p.stream, p.index, {
    width: p.width, height: p.height, bytesPerSample, decodedBitDepth: p.bitDepth, chroma444: p.chroma444,
    planes: [
      { ptr, stride: p.width },
      { ptr: ptr + lumaBytes, stride: chromaWidth },
      { ptr: ptr + lumaBytes + chromaBytes, stride: chromaWidth },
    ],
  });
}

/** Hands over every picture frame `frame` needs: picture f·k … f·k+k−1 of each stream (k maps per picture). */
export function putFramePictures(decoder: VpccDecoder, streams: VideoStream[], pictures: DumpedPicture[], frame: number, options: { nv12?: boolean } = {}): void {
  for (const s of streams) {
    const local = frame - s.firstFrame;
    for (const p of pictures) {
      if (p.stream === s.index && Math.floor(p.index / s.picturesPerFrame) === local) putDumpedPicture(decoder, p, options);
    }
  }
}

/** Header of a packed picture list: every field of each picture but its samples, in order. */
type PackedHeader = Array<Omit<DumpedPicture, 'samples'> & { bytes: number }>;

/**
 * Pictures as one buffer (a 4-byte header length, the JSON header, then every picture's samples
 * in order), so that a page can fetch them in one response.
 */
export function packPictures(pictures: DumpedPicture[]): Uint8Array {
  const header: PackedHeader = pictures.map(({ samples, ...rest }) => ({ ...rest, bytes: samples.length }));
  const json = new TextEncoder().encode(JSON.stringify(header));
  const total = 4 + json.length + pictures.reduce((sum, p) => sum + p.samples.length, 0);
  const out = new Uint8Array(total);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 4);
  let at = 4 + json.length;
  for (const p of pictures) {
    out.set(p.samples, at);
    at += p.samples.length;
  }
  return out;
}

/** The pictures of a `packPictures` buffer (views into it); throws on a buffer that does not add up. */
export function unpackPictures(packed: Uint8Array): DumpedPicture[] {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const headerBytes = view.getUint32(0, true);
  if (4 + headerBytes > packed.length) throw new Error('packed pictures: header runs past the end');
  const header = JSON.parse(new TextDecoder().decode(packed.subarray(4, 4 + headerBytes))) as PackedHeader;
  let at = 4 + headerBytes;
  return header.map(({ bytes, ...rest }) => {
    if (at + bytes > packed.length) throw new Error('packed pictures: samples run past the end');
    const samples = packed.subarray(at, at + bytes);
    at += bytes;
    return { ...rest, samples };
  });
}
