/**
 * Decodes one V-PCC segment in a worker: the wasm module parses it and names the video
 * sub-bitstreams, WebCodecs decodes them all at once, every decoded picture is copied straight
 * into wasm memory, and each point-cloud frame is reconstructed as soon as its pictures are in,
 * copied out once into its own transferable buffers, and its pictures freed — so only the
 * pictures of frames still waiting for a slower stream are ever held. HEVC where WebCodecs has
 * no decoder is decoded by the module itself (libde265), a frame's pictures of every stream at
 * a time, with the same frame-by-frame reconstruction.
 */
import type { DecodedFrame, PointFrame, AtlasFrame } from '../model/frames';
import { exportAtlasFrame } from './atlasFrame';
import { CodecUnavailableError, decodeVideoStream, webCodecsDecodes } from './video';
import type { VideoStream, VpccDecoder } from './vpcc';

/**
 * What a segment decodes to: reconstructed points (`points`: the CPU path, post-processed as the
 * stream asks); the frames' pictures and atlas for reconstruction on the GPU (`atlas`); per frame
 * the atlas when the GPU reconstructs it exactly — no post-processing asked for, no tool it lacks
 * — else points (`auto`, what a renderer with GPU reconstruction asks for); or points in `frames`
 * and the atlas in `atlasFrames` (`both`, for comparing the two).
 */
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

export type DecodeOutput = 'points' | 'atlas' | 'auto' | 'both';

export interface DecodeOptions {
  md5?: boolean;
  output?: DecodeOutput;
  /** CPU reconstruction without the stream's post-processing (default true: with it). */
  postProcess?: boolean;
  /** Largest atlas (and decoded picture) width and height taken (default `DEFAULT_MAX_ATLAS_SIZE`). */
  maxAtlasSize?: number;
}

/**
 * The default of `maxAtlasSize`: 4096 × 4096. A 16-bit plane of that is 32 MiB, and the module
 * keeps a few planes per frame in flight; the module itself parses atlases up to 16384², whose
 * planes are 512 MiB each, and wasm memory, once grown, never shrinks. Our packager's atlases and
 * those of the MPEG common test conditions are 2048 wide or less.
 */
export const DEFAULT_MAX_ATLAS_SIZE = 4096;

/** A segment refused before its pictures were decoded: an atlas or picture above the size limit. */
export class AtlasTooLargeError extends Error {
  override name = 'AtlasTooLargeError';
}

/**
 * Refuses a segment whose atlas (any of its coded sequences') is larger than `max` on a side. Run
 * after `load` (which parses the parameter sets but allocates no picture) and before any picture
 * is decoded or copied into wasm memory.
 */
function checkAtlasSize(decoder: VpccDecoder, frameCount: number, max: number): void {
  for (let f = 0; f < frameCount; f++) {
    const { width, height } = decoder.atlasSize(f);
    if (width > max || height > max) throw new AtlasTooLargeError(`atlas of ${width}×${height} is larger than the ${max}×${max} this player decodes`);
  }
}

export interface DecodedFrames {
  frames: DecodedFrame[];
  /** Output 'both' only. */
  atlasFrames?: AtlasFrame[];
  md5?: string[];
  timing: SegmentTiming;
}

/** Sample layout of a VideoFrame pixel format: bytes per sample, bit depth, 4:4:4 or 4:2:0. */
function formatOf(format: VideoPixelFormat | null): { bytes: 1 | 2; bits: number; chroma444: boolean; interleaved?: boolean } {
  // TypeScript's DOM types list only the 8-bit formats; Chromium also outputs the high-bit-depth ones.
  switch (format as string | null) {
    case 'I420': return { bytes: 1, bits: 8, chroma444: false };
    case 'NV12': return { bytes: 1, bits: 8, chroma444: false, interleaved: true };
    case 'I420P10': return { bytes: 2, bits: 10, chroma444: false };
    case 'I420P12': return { bytes: 2, bits: 12, chroma444: false };
    case 'I444': return { bytes: 1, bits: 8, chroma444: true };
    case 'I444P10': return { bytes: 2, bits: 10, chroma444: true };
    case 'I444P12': return { bytes: 2, bits: 12, chroma444: true };
    default: throw new Error(`decoded pictures in pixel format ${format ?? 'unknown'} are not supported`);
  }
}

export async function decodeSegment(decoder: VpccDecoder, bytes: Uint8Array, options: DecodeOptions = {}): Promise<DecodedFrames> {
  const output = options.output ?? 'points';
  const t0 = performance.now();
  const maxAtlasSize = options.maxAtlasSize ?? DEFAULT_MAX_ATLAS_SIZE;
  const streams = decoder.load(bytes);
  const parseMs = performance.now() - t0;
  const frameCount = decoder.frameCount;
  checkAtlasSize(decoder, frameCount, maxAtlasSize);
  const frames: DecodedFrame[] = [];
  const atlasFrames: AtlasFrame[] = [];
  let done = 0;
  const md5: string[] = [];
  const frameMs: number[] = [];
  const delivered = new Array<number>(streams.length).fill(0);
  let pictureMs = 0;

  // Pictures are handled strictly one at a time: copyTo is asynchronous, and wasm memory (the
  // scratch buffer, or the whole heap when it grows) must not change under a copy in flight.
  let chain: Promise<void> = Promise.resolve();
  let failure: Error | undefined;
  const accept = (stream: VideoStream, frame: VideoFrame) => {
    chain = chain.then(async () => {
      try {
        if (failure) return;
        const p0 = performance.now();
        await putPicture(decoder, stream, delivered[stream.index]++, frame, maxAtlasSize);
        pictureMs += performance.now() - p0;
        while (done < frameCount && decoder.frameReady(done)) reconstructNext();
      } catch (e) {
        failure ??= e as Error;
      } finally {
        frame.close();
      }
    });
  };
  const reconstructNext = () => {
    const f = done++;
    let r0 = performance.now();
    const params = output === 'points' ? null : decoder.reconstructionParams(f);
    const onGpu = output === 'auto' ? params!.unsupported === 0 && params!.postProcessing === 0 : output !== 'points';
    if (onGpu) (output === 'both' ? atlasFrames : frames).push(exportAtlasFrame(decoder, streams, f, params!));
    // With both outputs the time is the CPU reconstruction's alone (what the benchmark compares).
    if (output === 'both') r0 = performance.now();
    if (output === 'points' || output === 'both' || !onGpu) {
      const views = decoder.reconstruct(f, { postProcess: options.postProcess ?? true });
      // The one copy out of wasm memory, into buffers the worker can transfer.
      const points: PointFrame = { count: views.count, positions: views.positions.slice(), colors: views.colors.slice() };
      frames.push(points);
      if (options.md5) md5.push(decoder.frameMd5());
    }
    frameMs.push(performance.now() - r0);
    decoder.releaseFrame(f);
  };

  const viaWebCodecs = (await Promise.all(streams.map((s) => webCodecsDecodes(s.codec, s.data)))).every(Boolean);
  if (viaWebCodecs) {
    const results = await Promise.allSettled(streams.map((s) => decodeVideoStream(s.codec, s.data.slice(), (frame) => accept(s, frame))));
    await chain;
    const videoFailure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (videoFailure) throw videoFailure.reason;
    if (failure) throw failure;
  } else {
    const missing = streams.find((s) => !decoder.canDecode(s.codec));
    if (missing) throw new CodecUnavailableError(missing.codec === 'hevc' ? 'hevc (and this build of the decoder has no HEVC of its own)' : missing.codec);
    for (let f = 0; f < frameCount; f++) {
      const p0 = performance.now();
      for (const s of streams) {
        const need = Math.min(s.pictureCount, Math.max(0, (f + 1 - s.firstFrame) * s.picturesPerFrame));
        while (delivered[s.index] < need) {
          const n = decoder.decodePictures(s.index, need - delivered[s.index]);
          if (n === 0) break;
          delivered[s.index] += n;
        }
      }
      pictureMs += performance.now() - p0;
      while (done < frameCount && decoder.frameReady(done)) reconstructNext();
    }
  }
  for (const s of streams) {
    if (delivered[s.index] !== s.pictureCount)
      throw new Error(`${s.component} video (stream ${s.index}) gave ${delivered[s.index]} pictures, the atlas needs ${s.pictureCount}`);
  }
  if (done !== frameCount) throw new Error(`only ${done} of ${frameCount} frames could be reconstructed`);
  return { frames, atlasFrames: output === 'both' ? atlasFrames : undefined, md5: options.md5 && md5.length === frameCount ? md5 : undefined, timing: { totalMs: performance.now() - t0, parseMs, frameMs, pictureMs, videoDecoder: viaWebCodecs ? 'webcodecs' : 'wasm' } };
}

async function putPicture(decoder: VpccDecoder, stream: VideoStream, index: number, frame: VideoFrame, maxSize: number): Promise<void> {
  const { bytes, bits, chroma444, interleaved } = formatOf(frame.format);
  // A video stream may decode to pictures larger than the atlas it belongs to (the module checks
  // the match only once they are in): refuse before the copy grows wasm memory for it.
  if (frame.codedWidth > maxSize || frame.codedHeight > maxSize) {
    throw new AtlasTooLargeError(`${stream.component} picture of ${frame.codedWidth}×${frame.codedHeight} is larger than the ${maxSize}×${maxSize} this player decodes`);
  }
  const size = frame.allocationSize();
  const ptr = decoder.pictureBuffer(size);
  // Straight into wasm memory (the view is made after pictureBuffer, which may grow the heap).
  const layout = await frame.copyTo(new Uint8Array(decoder.module.HEAPU8.buffer, ptr, size));
  const plane = (i: number) => ({ ptr: ptr + layout[Math.min(i, layout.length - 1)].offset, stride: layout[Math.min(i, layout.length - 1)].stride / bytes });
  decoder.putPicture(stream.index, index, {
    width: frame.visibleRect?.width ?? frame.codedWidth,
    height: frame.visibleRect?.height ?? frame.codedHeight,
    bytesPerSample: bytes,
    decodedBitDepth: bits,
    chroma444,
    chromaInterleaved: interleaved,
    planes: [plane(0), plane(1), plane(2)],
  });
}
