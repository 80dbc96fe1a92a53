/**
 * Decodes one V-PCC video sub-bitstream with WebCodecs `VideoDecoder`, handing each decoded
 * picture (output order) to a callback. AVC is decoded by every Chromium; HEVC only where the
 * browser has a decoder for it (`isConfigSupported`, see `webCodecsDecodes`) — elsewhere the
 * segment decoder falls back to the wasm module's own HEVC decoder (segment.ts).
 */
import { accessUnits, codecString, type VideoCodecName } from './nal';

/** The codec cannot be decoded here. */
export class CodecUnavailableError extends Error {
  constructor(codec: string) {
    super(
      `this browser's WebCodecs cannot decode ${codec}` +
        (codec.startsWith('hev') ? ' (HEVC needs a hardware decoder here, or a decoder module built with libde265: scripts/setup.sh)' : ''),
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

export async function decodeVideoStream(
  codec: VideoCodecName,
  lengthPrefixed: Uint8Array,
  onPicture: (frame: VideoFrame) => void,
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
      if (failure) frame.close();
      else onPicture(frame);
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
