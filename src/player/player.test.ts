import { describe, expect, it } from 'vitest';
import type { SegmentDecoder } from '../model/decoder';
import { Player } from './player';

const decoder = { decode: () => Promise.reject(new Error('not used')) } as unknown as SegmentDecoder;
const make = (options: Partial<ConstructorParameters<typeof Player>[0]>) => new Player({ manifestUrl: 'https://o.test/m.mpd', decoder, ...options });

describe('Player options', () => {
  it('refuses buffer targets the playout loop cannot use, at construction rather than at play()', () => {
    expect(() => make({ bufferTargetS: 4, volatileBufferTargetS: 2 })).toThrow(/volatile buffer target \(2 s\) must be at least the buffer target \(4 s\)/);
    expect(() => make({ bufferTargetS: 0 })).toThrow(/buffer target must be a positive/);
    expect(() => make({ stallTimeoutS: -1 })).toThrow(/stall timeout/);
    expect(() => make({ bufferTargetS: 3, volatileBufferTargetS: 3, stallTimeoutS: 0 })).not.toThrow();
    expect(() => make({ bufferTargetS: 3 })).not.toThrow(); // volatile defaults to twice the base
  });
});
