import { describe, expect, it } from 'vitest';
import type { ObjectRequest, ObjectResult } from '../transport/types';
import { playOn, ScriptedLink } from '../testing/scriptedLink';
import { VirtualClock } from './clock';
import { pipelineLeadBytes, PIPELINE_CHECK_S, requestNextNow } from './pipelineAhead';

describe('pipelineLeadBytes', () => {
  it('is a round trip and one look of the link\'s bytes', () => {
    // 20 Mbit/s over 100 ms + 50 ms: 375 kB.
    expect(pipelineLeadBytes(20e6, 0.1)).toBeCloseTo((20e6 * (0.1 + PIPELINE_CHECK_S)) / 8);
    expect(pipelineLeadBytes(20e6, 0.1, 0)).toBe(250_000);
  });

  it('is 0 while the rate or the round trip is unknown', () => {
    expect(pipelineLeadBytes(null, 0.1)).toBe(0);
    expect(pipelineLeadBytes(20e6, NaN)).toBe(0);
    expect(pipelineLeadBytes(20e6, Infinity)).toBe(0);
    expect(pipelineLeadBytes(0, 0.1)).toBe(0);
  });
});

describe('requestNextNow', () => {
  const base = { rateBps: 20e6, rttS: 0.1, nextBytes: 500_000 };

  it('asks for the next segment when what is still owed drains within a round trip', () => {
    expect(requestNextNow({ ...base, owedBytes: 200_000 })).toBe(true);
  });

  it('waits while more than a round trip of bytes is still owed', () => {
    expect(requestNextNow({ ...base, owedBytes: 400_000 })).toBe(false);
  });

  it('never on an idle link: a full buffer is the buffer target\'s to refill', () => {
    expect(requestNextNow({ ...base, owedBytes: 0 })).toBe(false);
  });

  it('not before the first throughput measurement', () => {
    expect(requestNextNow({ ...base, rateBps: null, owedBytes: 1 })).toBe(false);
  });

  it('not beyond the client\'s cap on bytes in flight', () => {
    expect(requestNextNow({ ...base, owedBytes: 200_000, inFlightCapBytes: 600_000 })).toBe(false);
    expect(requestNextNow({ ...base, owedBytes: 200_000, inFlightCapBytes: 700_000 })).toBe(true);
  });
});

/** A scripted link that notes when each request was made (seconds on the virtual clock). */
class TimedLink extends ScriptedLink {
  readonly at: Array<{ segment: number; atS: number }> = [];

  constructor(private readonly timer: VirtualClock, rateBps: (t: number) => number) {
    super(timer, rateBps);
  }

  override fetchObject(req: ObjectRequest): Promise<ObjectResult> {
    this.at.push({ segment: Number(/seg-(\d+)/.exec(req.path)![1]), atS: this.timer.now() });
    return super.fetchObject(req);
  }
}

describe('PlayoutSession with requests pipelined across segments', () => {
  it('asks for the segment after the buffer target while the one before it still arrives, never further', async () => {
    const clock = new VirtualClock();
    const link = new TimedLink(clock, () => 10e6);
    const session = await playOn(clock, link, 12, { pipelineAhead: true });
    const startedAt = session.originS + session.startup;
    // Segment j plays at startedAt + j (no freezes on this link); the loop's turn for segment k
    // begins when k - 1 is shown and asks for k + 1 … k + 2 (the 2-s buffer target), so j's usual
    // time is when j - 3 is shown, at startedAt + j - 3.
    expect(session.freezeSummary().count).toBe(0);
    const firstRequest = new Map<number, number>();
    for (const { segment, atS } of link.at) if (!firstRequest.has(segment)) firstRequest.set(segment, atS);
    const lead = [...firstRequest].filter(([j]) => j >= 3).map(([j, atS]) => startedAt + j - 3 - atS);
    // Some segments were asked for before their usual time …
    expect(lead.some((s) => s > 0.05)).toBe(true);
    // … and none more than one segment before it.
    expect(Math.max(...lead)).toBeLessThanOrEqual(1 + 1e-6);
  });
});
