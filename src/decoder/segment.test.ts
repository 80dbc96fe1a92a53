import { describe, expect, it } from 'vitest';
import { AtlasTooLargeError, decodeSegment, DEFAULT_MAX_ATLAS_SIZE } from './segment';
import { isOutOfMemory, type VideoStream, type VpccDecoder, VpccError, VpccStatus } from './vpcc';

/**
 * A decoder whose segment has one frame of a `side` × `side` atlas and one HEVC stream the module
 * decodes itself (Node has no WebCodecs); it counts what it was asked to decode or allocate.
 */
function decoderWithAtlas(side: number) {
  const asked = { pictures: 0, pictureBytes: 0 };
  const stream: VideoStream = {
    index: 0, sequence: 0, component: 'geometry', map: 0, picturesPerFrame: 1, codec: 'hevc', bitDepth: 10,
    pictureCount: 1, firstFrame: 0, data: new Uint8Array(8), auxiliary: false,
  };
  const decoder = {
    load: () => [stream],
    frameCount: 1,
    atlasSize: () => ({ width: side, height: side }),
    canDecode: () => true,
    decodePictures: (_stream: number, count: number) => {
      asked.pictures += count;
      asked.pictureBytes += count * side * side * 2 * 1.5;
      return 0;
    },
    pictureBuffer: (size: number) => ((asked.pictureBytes += size), 0),
    frameReady: () => false,
  } as unknown as VpccDecoder;
  return { decoder, asked };
}

describe('decodeSegment under hostile input', () => {
  it('refuses a 16384² atlas before a single picture is decoded or allocated', async () => {
    const { decoder, asked } = decoderWithAtlas(16384);
    await expect(decodeSegment(decoder, new Uint8Array(16))).rejects.toThrow(new AtlasTooLargeError('atlas of 16384×16384 is larger than the 4096×4096 this player decodes'));
    expect(asked).toEqual({ pictures: 0, pictureBytes: 0 });
  });

  it('takes atlases up to the limit, which a caller may lower', async () => {
    const ordinary = decoderWithAtlas(DEFAULT_MAX_ATLAS_SIZE);
    // Its stream gives no picture: the decode fails later, for that reason, after asking for one.
    await expect(decodeSegment(ordinary.decoder, new Uint8Array(16))).rejects.toThrow(/gave 0 pictures/);
    expect(ordinary.asked.pictures).toBe(1);
    const lowered = decoderWithAtlas(2048);
    await expect(decodeSegment(lowered.decoder, new Uint8Array(16), { maxAtlasSize: 1024 })).rejects.toThrow(AtlasTooLargeError);
    expect(lowered.asked.pictures).toBe(0);
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
