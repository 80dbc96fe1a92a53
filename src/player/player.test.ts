import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SegmentDecoder } from '../model/decoder';
import { Player } from './player';
import { frameIndexAt } from './framesOnScreen';

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

  it('refuses a number of QoE records kept that is not a whole number ≥ 0', () => {
    expect(() => make({ qoeSegmentsKept: -1 })).toThrow(/QoE records kept must be a whole number ≥ 0, got -1/);
    expect(() => make({ qoeSegmentsKept: 2.5 })).toThrow(/got 2.5/);
    expect(() => make({ qoeSegmentsKept: Number.NaN })).toThrow(/got NaN/);
    expect(() => make({ qoeSegmentsKept: 0 })).not.toThrow(); // none kept: a host streams them out
  });
});

describe('frameIndexAt', () => {
  it('is the frame of the played position within its segment, from the segment start on the timeline', () => {
    expect(frameIndexAt(7.5, 7, 1, 30)).toBe(15);
    expect(frameIndexAt(7, 7, 1, 30)).toBe(0);
    expect(frameIndexAt(7.9999, 7, 1, 30)).toBe(29);
    // Past its end (the next segment is late) the last frame stays; before it, the first.
    expect(frameIndexAt(8.4, 7, 1, 30)).toBe(29);
    expect(frameIndexAt(6.9, 7, 1, 30)).toBe(0);
  });
});

describe('Player load', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('asks the origin for /config.json beside the manifest, not a round trip after it', async () => {
    // The docs/mpd.md example without its session URLs; the origin has no /config.json (404), so
    // the player ends on HTTP/2 — what matters is when each request went out.
    const doc = readFileSync(new URL('../../docs/mpd.md', import.meta.url), 'utf8');
    const manifest = /## Full example\s+```xml\n([\s\S]*?)```/.exec(doc)![1].replace(/^.*SupplementalProperty.*\n/gm, '');
    const asked: string[] = [];
    let configAsked!: () => void;
    const configAskedP = new Promise<void>((resolve) => (configAsked = resolve));
    vi.stubGlobal('WebTransport', class {});
    vi.stubGlobal('fetch', async (input: string | URL) => {
      const url = String(input);
      asked.push(new URL(url).pathname);
      if (url.endsWith('/config.json')) {
        configAsked();
        return new Response('not here', { status: 404 });
      }
      // The manifest is answered only once /config.json has been asked for: a player that asks for
      // it after the manifest never loads (the test times out).
      await configAskedP;
      return new Response(manifest, { status: 200 });
    });
    const player = make({});
    await player.load();
    expect(asked).toEqual(['/config.json', '/m.mpd']);
    player.close();
  });
});
