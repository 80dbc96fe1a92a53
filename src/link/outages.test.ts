import { describe, expect, it } from 'vitest';
import { LinkOutages, OUTAGE_GRACE_S } from './outages';

/** Samples every 50 ms from `fromS` to `toS` at `bps` (bytes rising while busy). */
function feed(o: LinkOutages, fromS: number, toS: number, state: { bytes: number }, bps: number, busy = true): void {
  for (let t = fromS; t < toS - 1e-9; t += 0.05) {
    if (busy) state.bytes += (bps * 0.05) / 8;
    o.sample(Number(t.toFixed(3)), Math.floor(state.bytes), busy);
  }
}

/** A watch that has seen one second of an 8-Mbit/s link, and the byte count it was fed. */
function afterASecondOfFlow(): { o: LinkOutages; state: { bytes: number } } {
  const o = new LinkOutages();
  const state = { bytes: 0 };
  feed(o, 0, 1, state, 8e6);
  return { o, state };
}

describe('LinkOutages', () => {
  it('records the part of an outage beyond the grace, once the link is back', () => {
    const { o, state } = afterASecondOfFlow();
    feed(o, 1, 4, state, 0); // nothing, 1.00–3.95 s
    expect(o.spansSince(0)).toEqual([]); // not over yet: it may be the link's new rate
    feed(o, 4, 5, state, 8e6);
    const spans = o.spansSince(0);
    expect(spans).toHaveLength(1);
    expect(spans[0][0]).toBeCloseTo((0.95 + OUTAGE_GRACE_S) * 1000);
    expect(spans[0][1]).toBeCloseTo(3950);
  });
  it('sees an outage that trickles, as the emulator\'s 50 kbit/s', () => {
    const { o, state } = afterASecondOfFlow();
    feed(o, 1, 4, state, 50e3);
    feed(o, 4, 5, state, 8e6);
    const [span, ...more] = o.spansSince(0);
    expect(more).toEqual([]);
    expect(span[1] - span[0]).toBeGreaterThan(2000);
  });
  it('keeps a slow link and holds shorter than the grace as link time', () => {
    const { o, state } = afterASecondOfFlow();
    feed(o, 1, 4, state, 200e3); // slow, not out
    feed(o, 4, 5, state, 8e6);
    feed(o, 5, 5.4, state, 0); // a retransmission's hold
    feed(o, 5.4, 6, state, 8e6);
    expect(o.spansSince(0)).toEqual([]);
  });
  it('is no outage when nothing was owed', () => {
    const { o, state } = afterASecondOfFlow();
    feed(o, 1, 3, state, 0, false);
    feed(o, 3, 4, state, 8e6);
    expect(o.spansSince(0)).toEqual([]);
  });
  it('ends a span at a gap between samples: a busy page, not a silent link', () => {
    const { o, state } = afterASecondOfFlow();
    feed(o, 1, 1.3, state, 0); // silent 0.95–1.25 s, then the page stalls for 0.8 s
    feed(o, 2.05, 2.4, state, 0); // silent again 2.05–2.35 s
    feed(o, 2.4, 3, state, 8e6);
    expect(o.spansSince(0)).toEqual([]);
  });
  it('returns only the outages that end after the given time, and forgets old ones', () => {
    const { o, state } = afterASecondOfFlow();
    feed(o, 1, 3, state, 0);
    feed(o, 3, 4, state, 8e6);
    expect(o.spansSince(3000)).toEqual([]);
    expect(o.spansSince(2000)).toHaveLength(1);
    feed(o, 4, 33, state, 8e6);
    feed(o, 33, 35, state, 0);
    feed(o, 35, 36, state, 8e6);
    expect(o.spansSince(0)).toHaveLength(1);
  });
});
