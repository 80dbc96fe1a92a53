/**
 * Decodes one V-PCC video sub-bitstream with WebCodecs `VideoDecoder`, handing each decoded
 * picture (output order) to a callback as a `DecodedPicture`. AVC is decoded by every Chromium;
 * HEVC only where the browser has a decoder for it (`isConfigSupported`, see `webCodecsDecodes`)
 * — elsewhere the segment decoder takes the optional HEVC module instead (segment.ts, hevc.ts).
 */
import { accessUnits, codecString, type VideoCodecName } from './nal';
import type { DecodedPicture } from './picture';

/** The codec cannot be decoded here. */
export class CodecUnavailableError extends Error {
  constructor(codec: string) {
    super(
      `this browser's WebCodecs cannot decode ${codec}` +
        (codec.startsWith('hev') ? ' (HEVC needs a hardware decoder here, or the optional HEVC module vpcc-hevc, built with libde265 by scripts/setup.sh)' : ''),
    );
    this.name = 'CodecUnavailableError';
  }
}

/**
 * H.264 in software everywhere: fast enough for these picture sizes, and always I420 in system
 * memory. HEVC mostly exists only in hardware (whose NV12 output is handled too).
 */
function configFor(codec: VideoCodecName, lengthPrefixed: Uint8Array): VideoDecoderConfig {
  return { codec: codecString(codec, lengthPrefixed), hardwareAcceleration: codec === 'avc' ? 'prefer-software' : 'no-preference' };
}

const support = new Map<string, Promise<boolean>>();

/** Whether this browser's WebCodecs decodes a stream like this one (asked once per codec string). */
export function webCodecsDecodes(codec: VideoCodecName, lengthPrefixed: Uint8Array): Promise<boolean> {
  if (typeof VideoDecoder === 'undefined') return Promise.resolve(false);
  const config = configFor(codec, lengthPrefixed);
  let answer = support.get(config.codec);
  if (!answer) {
    answer = VideoDecoder.isConfigSupported(config).then((s) => !!s.supported, () => false);
    support.set(config.codec, answer);
  }
  return answer;
}

/** Sample layout of a VideoFrame pixel format: bytes per sample, bit depth, 4:4:4 or 4:2:0. */
function formatOf(format: VideoPixelFormat | null): { bytes: 1 | 2; bits: number; chroma444: boolean; interleaved: boolean } {
  // TypeScript's DOM types list only the 8-bit formats; Chromium also outputs the high-bit-depth ones.
  switch (format as string | null) {
    case 'I420': return { bytes: 1, bits: 8, chroma444: false, interleaved: false };
    case 'NV12': return { bytes: 1, bits: 8, chroma444: false, interleaved: true };
    case 'I420P10': return { bytes: 2, bits: 10, chroma444: false, interleaved: false };
    case 'I420P12': return { bytes: 2, bits: 12, chroma444: false, interleaved: false };
    case 'I444': return { bytes: 1, bits: 8, chroma444: true, interleaved: false };
    case 'I444P10': return { bytes: 2, bits: 10, chroma444: true, interleaved: false };
    case 'I444P12': return { bytes: 2, bits: 12, chroma444: true, interleaved: false };
    default: throw new Error(`decoded pictures in pixel format ${format ?? 'unknown'} are not supported`);
  }
}

/** A WebCodecs output frame as a `DecodedPicture` (closing it closes the frame). */
function pictureOf(frame: VideoFrame): DecodedPicture {
  const { bytes, bits, chroma444, interleaved } = formatOf(frame.format);
  return {
    width: frame.visibleRect?.width ?? frame.codedWidth,
    height: frame.visibleRect?.height ?? frame.codedHeight,
    codedWidth: frame.codedWidth,
    codedHeight: frame.codedHeight,
    bytesPerSample: bytes, bitDepth: bits, chroma444, chromaInterleaved: interleaved,
    byteLength: frame.allocationSize(),
    copyTo: async (target) => (await frame.copyTo(target)).map((plane) => ({ offset: plane.offset, stride: plane.stride / bytes })),
    close: () => frame.close(),
  };
}

/**
 * Decodes a stream, calling `onPicture` with every picture in output order; the callee closes
 * each. A frame whose pixel format is not supported fails the stream.
 */
export async function decodeVideoStream(
  codec: VideoCodecName,
  lengthPrefixed: Uint8Array,
  onPicture: (picture: DecodedPicture) => void,
): Promise<void> {
  if (typeof VideoDecoder === 'undefined') throw new CodecUnavailableError(`${codec} (no WebCodecs in this context)`);
  const config = configFor(codec, lengthPrefixed);
  const support = await VideoDecoder.isConfigSupported(config);
  if (!support.supported) throw new CodecUnavailableError(config.codec);
  const units = accessUnits(codec, lengthPrefixed);
  if (units.length === 0) throw new Error(`${config.codec} video sub-bitstream has no pictures`);
  if (!units[0].key) throw new Error(`${config.codec} video sub-bitstream does not start with a key picture`);

  let failure: Error | undefined;
  const decoder = new VideoDecoder({
    output: (frame) => {
      if (failure) return frame.close();
      let picture: DecodedPicture;
      try {
        picture = pictureOf(frame);
      } catch (e) {
        frame.close();
        failure = e as Error;
        return;
      }
      onPicture(picture);
    },
    error: (e) => {
      failure ??= new Error(`${config.codec} video does not decode: ${e.message}`);
    },
  });
  try {
    decoder.configure(config);
    // Timestamps are decode order: only for WebCodecs' bookkeeping, pictures come out in output order.
    units.forEach((unit, i) => decoder.decode(new EncodedVideoChunk({ type: unit.key ? 'key' : 'delta', timestamp: i, data: unit.data })));
    await decoder.flush();
  } catch (e) {
    failure ??= new Error(`${config.codec} video does not decode: ${(e as Error).message}`);
  } finally {
    if (decoder.state !== 'closed') decoder.close();
  }
  if (failure) throw failure;
}
