import { describe, expect, it } from 'vitest';
import type { StreamDecoder } from './picture';
import { AtlasTooLargeError, decodeSegment, DEFAULT_MAX_ATLAS_SIZE, type VideoDecoders } from './segment';
import { isOutOfMemory, type VideoStream, type VpccDecoder, VpccError, VpccStatus } from './vpcc';

/**
 * A decoder whose segment has one frame of a `side` × `side` atlas and one HEVC stream (Node has
 * no WebCodecs, so the HEVC module is asked for), and an HEVC module whose stream gives no
 * picture; both count what they were asked to load, decode or allocate.
 */
function decoderWithAtlas(side: number) {
  const asked = { hevcLoads: 0, pictures: 0, pictureBytes: 0 };
  const stream: VideoStream = {
    index: 0, sequence: 0, component: 'geometry', map: 0, picturesPerFrame: 1, codec: 'hevc', bitDepth: 10,
    pictureCount: 1, firstFrame: 0, data: new Uint8Array(8), auxiliary: false,
  };
  const decoder = {
    load: () => [stream],
    frameCount: 1,
    atlasSize: () => ({ width: side, height: side }),
    pictureBuffer: (size: number) => ((asked.pictureBytes += size), 0),
    frameReady: () => false,
  } as unknown as VpccDecoder;
  const hevc: StreamDecoder = {
    open: () => ({
      next: () => (asked.pictures++, null),
      close: () => {},
    }),
  };
  const decoders: VideoDecoders = { hevc: async () => (asked.hevcLoads++, hevc) };
  return { decoder, decoders, asked };
}

describe('decodeSegment under hostile input', () => {
  it('refuses a 16384² atlas before the HEVC module is loaded or a picture decoded or allocated', async () => {
    const { decoder, decoders, asked } = decoderWithAtlas(16384);
    await expect(decodeSegment(decoder, new Uint8Array(16), {}, decoders)).rejects.toThrow(new AtlasTooLargeError('atlas of 16384×16384 is larger than the 4096×4096 this player decodes'));
    expect(asked).toEqual({ hevcLoads: 0, pictures: 0, pictureBytes: 0 });
  });

  it('takes atlases up to the limit, which a caller may lower', async () => {
    const ordinary = decoderWithAtlas(DEFAULT_MAX_ATLAS_SIZE);
    // Its stream gives no picture: the decode fails later, for that reason, after asking for one.
    await expect(decodeSegment(ordinary.decoder, new Uint8Array(16), {}, ordinary.decoders)).rejects.toThrow(/gave 0 pictures/);
    expect(ordinary.asked).toEqual({ hevcLoads: 1, pictures: 1, pictureBytes: 0 });
    const lowered = decoderWithAtlas(2048);
    await expect(decodeSegment(lowered.decoder, new Uint8Array(16), { maxAtlasSize: 1024 }, lowered.decoders)).rejects.toThrow(AtlasTooLargeError);
    expect(lowered.asked.pictures).toBe(0);
  });

  it('names the missing decoder when HEVC meets neither WebCodecs nor an HEVC module', async () => {
    const { decoder } = decoderWithAtlas(1024);
    await expect(decodeSegment(decoder, new Uint8Array(16))).rejects.toThrow(/cannot decode hevc \(and this player was given no HEVC module\)/);
  });
});

describe('isOutOfMemory', () => {
  it('tells running out of memory (the worker is replaced) from a decode error (an answer)', () => {
    expect(isOutOfMemory(new VpccError(VpccStatus.memory, 'cannot allocate a picture'))).toBe(true);
    expect(isOutOfMemory(new RangeError('Array buffer allocation failed'))).toBe(true);
    expect(isOutOfMemory(new VpccError(VpccStatus.bitstream, 'bad NAL unit'))).toBe(false);
    expect(isOutOfMemory(new AtlasTooLargeError('atlas too large'))).toBe(false);
  });
});
