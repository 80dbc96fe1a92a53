import { describe, expect, it } from 'vitest';
import type { ObjectRequest, ObjectResult, ObjectTransport } from '../transport/types';
import { playOn, scene, ScriptedLink } from '../testing/scriptedLink';
import { VirtualClock } from './clock';
import { FixedModePolicy } from './policy';
import { knapsackRule } from './rules';

/** Per segment: when its first request was made and when its last object's bytes were in (one pass: 10 segments). */
async function playLogged(kind: 'http2' | 'webtransport', rateBps: number, durationS: number) {
  const clock = new VirtualClock();
  const link = new ScriptedLink(clock, () => rateBps);
  const firstRequest = new Map<number, number>();
  const lastArrival = new Map<number, number>();
  const transport: ObjectTransport = {
    kind, state: 'connected', connect: async () => {}, onStateChange: () => () => {}, close: () => {},
    linkEstimate: () => link.linkEstimate(),
    fetchObject: async (req: ObjectRequest): Promise<ObjectResult> => {
      const index = Number(/seg-(\d+)/.exec(req.path)![1]);
      if (!firstRequest.has(index)) firstRequest.set(index, clock.now());
      const result = await link.fetchObject(req);
      if (result.bytes) lastArrival.set(index, Math.max(lastArrival.get(index) ?? 0, clock.now()));
      return result;
    },
  };
  const transports = kind === 'http2' ? { http2: transport } : { webtransport: transport, http2: transport };
  const session = await playOn(clock, link, durationS, {
    scene: scene(3), transports, policy: new FixedModePolicy(kind === 'http2' ? 'h2' : 'qr', knapsackRule),
  });
  return { session, firstRequest, lastArrival };
}

/** Segments (after the first) asked for before the one before them had all its bytes. */
function overlapping({ firstRequest, lastArrival }: Awaited<ReturnType<typeof playLogged>>): number[] {
  return [...firstRequest.entries()]
    .filter(([k, at]) => k > 0 && lastArrival.has(k - 1) && at < lastArrival.get(k - 1)! - 1e-9)
    .map(([k]) => k);
}

describe('segments in turn over HTTP/2', () => {
  it('asks for a segment only once the one before it has arrived, and still plays without freezing', async () => {
    // 4 Mbit/s for three objects of at least 1 Mbit/s: a prefetched segment would overlap the one before it.
    const run = await playLogged('http2', 4e6, 8);
    expect(run.firstRequest.size).toBeGreaterThan(6);
    expect(Math.max(...run.firstRequest.keys())).toBeLessThan(10);
    expect(overlapping(run)).toEqual([]);
    expect(run.session.freezeSummary().count).toBe(0);
  });

  it('leaves WebTransport alone: its origin serves by urgency, so segments are asked for ahead at once', async () => {
    const run = await playLogged('webtransport', 4e6, 8);
    expect(overlapping(run).length).toBeGreaterThan(0);
  });
});
