import { describe, expect, it } from 'vitest';
import { ByteArrivals } from './arrivals';
import { segmentGoodput, ThroughputEstimator } from './throughput';

/** A link log in which each [bytes, fromMs, toMs] arrived evenly over its span (1-ms steps). */
function linkOf(...transfers: Array<readonly [number, number, number]>): ByteArrivals {
  const events = transfers.flatMap(([bytes, from, to]) => Array.from({ length: to - from }, (_, i) => [from + i + 0.5, bytes / (to - from)] as const));
  const link = new ByteArrivals();
  for (const [at, bytes] of events.sort((a, b) => a[0] - b[0])) link.add(bytes, at);
  return link;
}

describe('segmentGoodput', () => {
  it('counts overlapping deliveries once and ignores idle gaps', () => {
    // 2 × 125 000 B over a busy union of 200 ms (0–100 and 900–1000): 10 Mb/s, not 2 Mb/s.
    const g = segmentGoodput([
      { receivedBytes: 125_000, startMs: 0, endMs: 100 },
      { receivedBytes: 125_000, startMs: 900, endMs: 1000 },
    ]);
    expect(g).toBeCloseTo(10e6);
  });
  it('returns null when nothing was in flight', () => {
    expect(segmentGoodput([])).toBeNull();
  });
  it('takes the round trip off each busy period: on a 100-ms path a 10-Mbit/s link reads as 10, not 8', () => {
    // Four objects asked for at once; the first byte comes one round trip (100 ms) later, then
    // 500 000 B at 10 Mbit/s (400 ms).
    const objects = [0, 1, 2, 3].map((i) => ({ receivedBytes: 125_000, startMs: 0, endMs: 100 + 100 * (i + 1) }));
    expect(segmentGoodput(objects)).toBeCloseTo(8e6);
    expect(segmentGoodput(objects, 100)).toBeCloseTo(10e6);
    // Two busy periods, one round trip each.
    const two = [{ receivedBytes: 125_000, startMs: 0, endMs: 200 }, { receivedBytes: 125_000, startMs: 900, endMs: 1100 }];
    expect(segmentGoodput(two, 100)).toBeCloseTo(10e6);
  });
  it('leaves a datagram object\'s wait on its repair timer out of the busy time, unless another object was in flight', () => {
    // 10-Mbit/s link, 50-ms path: 100 000 B from 50 to 130 ms, SENT, the repair timer waits until
    // 205 ms, the repair request's round trip, then 12 500 B from 255 to 265 ms: 90 ms of transfer.
    const alone = { receivedBytes: 112_500, startMs: 0, endMs: 265, waits: [[130, 205]] as const };
    // Two busy periods less one round trip each: 80 + 10 ms of transfer, not 215 — the link's 10 Mbit/s.
    expect(segmentGoodput([alone], 50)).toBeCloseTo(10e6);
    // A reliable object receiving throughout the wait keeps it busy time.
    const reliable = { receivedBytes: 100_000, startMs: 0, endMs: 265 };
    expect(segmentGoodput([alone, reliable], 50)).toBeCloseTo((212_500 * 8 * 1000) / 215);
  });
  it('counts the bytes the link carried for another segment while this one was owed bytes: shared time reads the link, not a share of it', () => {
    // A 10-Mbit/s link shared evenly from 200 to 600 ms. Segment k: its reliable object
    // (250 000 B) alone 0–200 ms, then its datagram object (250 000 B, asked for at 0) beside the
    // next segment's reliable object (375 000 B, asked for at 200 ms): 5 Mbit/s each, 200–600 ms;
    // the next segment's object finishes alone 600–700 ms.
    const link = linkOf([250_000, 0, 200], [500_000, 200, 600], [125_000, 600, 700]);
    const k = [{ receivedBytes: 250_000, startMs: 0, endMs: 200 }, { receivedBytes: 250_000, startMs: 0, endMs: 600 }];
    const next = [{ receivedBytes: 375_000, startMs: 200, endMs: 700 }];
    expect(segmentGoodput(k, 0, link)).toBeCloseTo(10e6, -3);
    expect(segmentGoodput(next, 0, link)).toBeCloseTo(10e6, -3);
    // Counting only their own bytes, both read low: 6.7 and 6 Mbit/s.
    expect(segmentGoodput(k)).toBeCloseTo(20e6 / 3);
    expect(segmentGoodput(next)).toBeCloseTo(6e6);
  });
  it('a segment asked for behind another reads the link, not the wait for the earlier one', () => {
    // Two segments asked for at once on a 10-Mbit/s link: the first 0–200 ms, the second behind it, 200–400 ms.
    const link = linkOf([250_000, 0, 200], [250_000, 200, 400]);
    expect(segmentGoodput([{ receivedBytes: 250_000, startMs: 0, endMs: 400 }], 0, link)).toBeCloseTo(10e6, -3);
    expect(segmentGoodput([{ receivedBytes: 250_000, startMs: 0, endMs: 400 }])).toBeCloseTo(5e6);
  });
  it('takes the request\'s round trip off the link\'s bytes and time alike', () => {
    // 100-ms path; the link carries an earlier segment's bytes (2.5 Mbit/s) during this request's
    // round trip, then this segment's 125 000 B at 10 Mbit/s: the sample is the 10 after the round trip.
    const link = linkOf([31_250, 0, 100], [125_000, 100, 200]);
    expect(segmentGoodput([{ receivedBytes: 125_000, startMs: 0, endMs: 200 }], 100, link)).toBeCloseTo(10e6, -3);
  });
  it('takes at most half of a busy period off, so an inflated round trip cannot more than double a sample', () => {
    expect(segmentGoodput([{ receivedBytes: 125_000, startMs: 0, endMs: 100 }], 500)).toBeCloseTo(20e6);
  });
  it('takes a repair request\'s whole round trip off: at 50 ms one way, repair on demand does not read as a slow link', () => {
    // A 10-Mbit/s link, 100-ms path. A reliable object: 250 000 B arriving 100–300 ms. Three
    // datagram objects of 25 000 B each, sent after it (300–320, 320–340, 340–360 ms), each
    // short a few symbols: SENT, the repair timer's 150 ms, then the repair's round trip and
    // 1 250 B in 1 ms. 81 250 B more, 65 ms of transfer in all.
    const reliable = { receivedBytes: 250_000, startMs: 0, endMs: 300 };
    const datagrams = [320, 340, 360].map((last) => ({
      receivedBytes: 26_250, startMs: 0, endMs: last + 150 + 101, waits: [[last, last + 150]] as const,
    }));
    // 0–360 ms less the request's round trip, and each repair's 1 ms after its round trip: 10.1 Mbit/s.
    // (With at most half of the repairs' overlapping 141-ms period off, as for an object's request: 8.0.)
    const transferMs = 260 + 3;
    expect(segmentGoodput([reliable, ...datagrams], 100)).toBeCloseTo(((250_000 + 3 * 26_250) * 8 * 1000) / transferMs);
  });
});

describe('ThroughputEstimator', () => {
  it('takes the harmonic mean of the window, dominated by the slow segment', () => {
    const e = new ThroughputEstimator(2);
    expect(e.estimate()).toBeNull();
    e.addSegment([{ receivedBytes: 125_000, startMs: 0, endMs: 100 }]); // 10 Mb/s
    e.addSegment([{ receivedBytes: 125_000, startMs: 0, endMs: 1000 }]); // 1 Mb/s
    expect(e.estimate()).toBeCloseTo(2 / (1 / 10e6 + 1 / 1e6));
    e.addSegment([{ receivedBytes: 125_000, startMs: 0, endMs: 1000 }]); // window drops the 10 Mb/s
    expect(e.estimate()).toBeCloseTo(1e6);
  });
  it('leaves the link\'s outages out: a segment straddling one reads the link, not the outage', () => {
    // A 2-Mbit/s link silent from 1 000 to 4 000 ms: a reliable object of 250 000 B asked for at
    // 0 receives 125 000 B by 500 ms, nothing through the outage, the rest 4 000–4 500 ms.
    const straddling = [{ receivedBytes: 250_000, startMs: 0, endMs: 4500 }];
    // Counted in, 4.5 s of "busy" time: 0.44 Mbit/s.
    expect(segmentGoodput(straddling)).toBeCloseTo((250_000 * 8 * 1000) / 4500);
    // The silence less its grace (LinkSilences) — 1 500–4 000 ms — comes off; the hold before it counts.
    expect(segmentGoodput(straddling, 0, undefined, [[1500, 4000]])).toBeCloseTo((250_000 * 8 * 1000) / 2000);
    const e = new ThroughputEstimator(5);
    for (let k = 0; k < 3; k++) e.addSegment([{ receivedBytes: 250_000, startMs: k * 1000, endMs: k * 1000 + 1000 }]);
    e.addSegment(straddling, 0, undefined, [[1500, 4000]]);
    expect(e.estimate()).toBeGreaterThan(1.5e6);
  });
  it('rejects a bad window', () => {
    expect(() => new ThroughputEstimator(0)).toThrow(/window/);
  });
});
