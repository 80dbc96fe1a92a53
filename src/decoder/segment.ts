/**
 * Decodes one V-PCC segment in a worker: the core wasm module parses it and names the video
 * sub-bitstreams, a video decoder turns them into pictures, every picture is copied straight
 * into wasm memory (`putDecodedPicture`, the one path for all decoders), and each point-cloud
 * frame is reconstructed as soon as its pictures are in, copied out once into its own
 * transferable buffers, and its pictures freed — so only the pictures of frames still waiting
 * for a slower stream are ever held. The video decoder is WebCodecs, all streams at once, where
 * the browser decodes every stream's codec; else the optional HEVC module, loaded on this first
 * need and pulled a frame's pictures of every stream at a time.
 */
import type { DecodedFrame, PointFrame, AtlasFrame } from '../model/frames';
import { exportAtlasFrame } from './atlasFrame';
import { AtlasTooLargeError, checkPictureSize, DEFAULT_MAX_ATLAS_SIZE, type DecodedPicture, type PictureStream, putDecodedPicture, type StreamDecoder } from './picture';
import { CodecUnavailableError, decodeVideoStream, webCodecsDecodes } from './video';
import type { VideoStream, VpccDecoder } from './vpcc';
import type { CoreModuleInfo } from './coreModule';

export { AtlasTooLargeError } from './picture';
export { DEFAULT_MAX_ATLAS_SIZE } from './picture';

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
   * All decoded pictures: the copy into wasm memory + bit-depth conversion; with the HEVC
   * module, the decoding itself too.
   */
  pictureMs: number;
  /** Who decoded the video: the browser's WebCodecs, or the optional HEVC module (HEVC without WebCodecs). */
  videoDecoder: 'webcodecs' | 'hevc-module';
  /** Which build of the core module reconstructed (set by the decode worker; coreModule.ts). */
  core?: CoreModuleInfo;
}

export type DecodeOutput = 'points' | 'atlas' | 'auto' | 'both';

export interface DecodeOptions {
  md5?: boolean;
  output?: DecodeOutput;
  /** CPU reconstruction without the stream's post-processing (default true: with it). */
  postProcess?: boolean;
  /** Largest atlas (and decoded picture) width and height taken (default `DEFAULT_MAX_ATLAS_SIZE`). */
  maxAtlasSize?: number;
  /** The V3C level the manifest declares for the segment: a larger atlas fails while parsing. */
  v3cLevelIdc?: number;
  /**
   * Frames, counting the next to reconstruct, whose pictures may be in wasm memory (default
   * `FRAMES_IN_WASM`). A picture of a later frame — a video stream running ahead of the others —
   * waits outside it, copied out of its decoder, until reconstruction comes near its frame.
   */
  framesInWasm?: number;
}

/**
 * The default of `framesInWasm`: only the frame to reconstruct next. Wasm memory never shrinks,
 * so how far one stream's decoder ran ahead of another's in a segment would otherwise set the
 * worker's heap for good: with WebCodecs that is timing, and a rare lag (a busy core) late in a
 * long play grew it. With two frames' pictures in, the next frame's sat between the blocks of
 * the reconstruction running on the first, so the free holes they left differed from frame to
 * frame, and the allocator's peak still crept up over a long play until the heap grew once more.
 * With one, the heap between frames holds only the segment: each frame's pictures and its
 * reconstruction are laid out on the same ground every time (docs/benchmarks.md, "Decode
 * workers' memory under rung switching"). A picture that waits costs one more copy.
 */
export const FRAMES_IN_WASM = 1;


/**
 * The video decoders a segment may need besides WebCodecs. `hevc` loads the optional HEVC module;
 * it is called only for a segment with HEVC that WebCodecs cannot decode (and should load it once).
 */
export interface VideoDecoders {
  hevc?: () => Promise<StreamDecoder>;
  /**
   * Decodes one stream, pushing its pictures (output order) as they come, every stream at once:
   * WebCodecs' way, and WebCodecs by default where it decodes every stream's codec. Given, it is
   * used instead (the Node tests push natively decoded pictures in a seeded race of the streams).
   */
  push?: (stream: VideoStream, onPicture: (picture: DecodedPicture) => void) => Promise<void>;
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

/** A picture of a frame beyond `framesInWasm`, held outside wasm memory until its frame is near. */
interface WaitingPicture {
  stream: VideoStream;
  index: number;
  frame: number;
  picture: DecodedPicture;
}

/** The waiting pictures of frames before `frameEnd`, taken out of `waiting`, in arrival order. */
function takeWithin(waiting: WaitingPicture[], frameEnd: number): WaitingPicture[] {
  const taken = waiting.filter((w) => w.frame < frameEnd);
  if (taken.length) waiting.splice(0, waiting.length, ...waiting.filter((w) => w.frame >= frameEnd));
  return taken;
}

/**
 * `picture` copied into a buffer of its own (JavaScript memory, collected once used), so its
 * decoder gets its frame back at once. Checked against the size cap first, like a picture put in.
 */
async function copiedOut(stream: VideoStream, picture: DecodedPicture, maxSize: number): Promise<DecodedPicture> {
  checkPictureSize(stream, picture, maxSize);
  const bytes = new Uint8Array(picture.byteLength);
  const layout = await picture.copyTo(bytes);
  const { width, height, codedWidth, codedHeight, bytesPerSample, bitDepth, chroma444, chromaInterleaved, byteLength } = picture;
  return {
    width, height, codedWidth, codedHeight, bytesPerSample, bitDepth, chroma444, chromaInterleaved, byteLength,
    copyTo: async (target) => {
      target.set(bytes);
      return layout;
    },
    close: () => {},
  };
}

export interface DecodedFrames {
  frames: DecodedFrame[];
  /** Output 'both' only. */
  atlasFrames?: AtlasFrame[];
  md5?: string[];
  timing: SegmentTiming;
}

export async function decodeSegment(decoder: VpccDecoder, bytes: Uint8Array, options: DecodeOptions = {}, decoders: VideoDecoders = {}): Promise<DecodedFrames> {
  const output = options.output ?? 'points';
  const t0 = performance.now();
  const maxAtlasSize = options.maxAtlasSize ?? DEFAULT_MAX_ATLAS_SIZE;
  const streams = decoder.load(bytes, { manifestLevelIdc: options.v3cLevelIdc });
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

  // Pictures are handled strictly one at a time: copyTo may be asynchronous, and wasm memory
  // (the scratch buffer, or the whole heap when it grows) must not change under a copy in flight.
  let chain: Promise<void> = Promise.resolve();
  let failure: Error | undefined;
  const framesInWasm = options.framesInWasm ?? FRAMES_IN_WASM;
  const waiting: WaitingPicture[] = [];
  const accept = (stream: VideoStream, picture: DecodedPicture): Promise<void> => {
    chain = chain.then(async () => {
      try {
        if (failure) return;
        const index = delivered[stream.index]++;
        const frame = stream.firstFrame + Math.floor(index / stream.picturesPerFrame);
        const p0 = performance.now();
        if (frame >= done + framesInWasm) waiting.push({ stream, index, frame, picture: await copiedOut(stream, picture, maxAtlasSize) });
        else await putDecodedPicture(decoder, stream, index, picture, maxAtlasSize);
        pictureMs += performance.now() - p0;
        while (done < frameCount && decoder.frameReady(done)) {
          reconstructNext();
          // Pictures that waited outside wasm memory go in as their frame comes within reach.
          for (const w of takeWithin(waiting, done + framesInWasm)) {
            const w0 = performance.now();
            await putDecodedPicture(decoder, w.stream, w.index, w.picture, maxAtlasSize);
            pictureMs += performance.now() - w0;
          }
        }
      } catch (e) {
        failure ??= e as Error;
      } finally {
        picture.close();
      }
    });
    return chain;
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

  const push = decoders.push ?? ((s: VideoStream, onPicture: (picture: DecodedPicture) => void) => decodeVideoStream(s.codec, s.data.slice(), onPicture));
  const viaWebCodecs = decoders.push !== undefined || (await Promise.all(streams.map((s) => webCodecsDecodes(s.codec, s.data)))).every(Boolean);
  if (viaWebCodecs) {
    const results = await Promise.allSettled(streams.map((s) => push(s, (picture) => void accept(s, picture))));
    await chain;
    const videoFailure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (videoFailure) throw videoFailure.reason;
    if (failure) throw failure;
  } else {
    const missing = streams.find((s) => s.codec !== 'hevc');
    if (missing) throw new CodecUnavailableError(missing.codec);
    if (!decoders.hevc) throw new CodecUnavailableError('hevc (and this player was given no HEVC module)');
    const hevc = await decoders.hevc();
    // Each stream's bytes go into the HEVC module now, while the views into the core's memory
    // are valid (nothing has allocated there since load).
    const opened: PictureStream[] = [];
    try {
      for (const s of streams) opened.push(hevc.open(s.data));
      // A frame's pictures of every stream in turn: only the frames in progress are held.
      for (let f = 0; f < frameCount && !failure; f++) {
        for (const s of streams) {
          const need = Math.min(s.pictureCount, Math.max(0, (f + 1 - s.firstFrame) * s.picturesPerFrame));
          while (delivered[s.index] < need && !failure) {
            const p0 = performance.now();
            const picture = opened[s.index].next();
            pictureMs += performance.now() - p0;
            if (!picture) break;
            await accept(s, picture);
          }
        }
      }
    } finally {
      for (const stream of opened) stream.close();
    }
    if (failure) throw failure;
  }
  for (const s of streams) {
    if (delivered[s.index] !== s.pictureCount)
      throw new Error(`${s.component} video (stream ${s.index}) gave ${delivered[s.index]} pictures, the atlas needs ${s.pictureCount}`);
  }
  if (done !== frameCount) throw new Error(`only ${done} of ${frameCount} frames could be reconstructed`);
  return { frames, atlasFrames: output === 'both' ? atlasFrames : undefined, md5: options.md5 && md5.length === frameCount ? md5 : undefined, timing: { totalMs: performance.now() - t0, parseMs, frameMs, pictureMs, videoDecoder: viaWebCodecs ? 'webcodecs' : 'hevc-module' } };
}

