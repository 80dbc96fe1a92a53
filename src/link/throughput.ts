/**
 * Throughput estimate robust to the 1-s request cadence.
 *
 * Per segment, goodput is the bytes received over the *busy* time (union of the intervals in
 * which at least one object of the segment was in flight), so the idle gap between segments
 * never dilutes the estimate. Each busy period begins with a request that needs the path's
 * propagation round trip before its first byte can arrive, time no bandwidth shortens: it comes
 * off each busy period that begins with a request (at most half of it, so an inflated RTT cannot
 * more than double a sample).
 * Without that a 100-ms path read as a slow link (at 50 ms one way the player measured 2–3 Mbit/s
 * where the link gave 8–11, and chose the lowest rung). A datagram object that asks for repair on
 * demand first waits on its repair timer (about 1.5 round trips after the origin's SENT) with
 * nothing owed to it: those waits (`DeliverySample.waits`) are not busy time unless another object
 * was in flight. Counted as link time they made a session with datagrams read ~8 % below `qr`'s
 * on the walking trace (docs/results.md, "`adaptive` on a thin link"). Nor is the round trip of
 * the repair request that ends a wait: the few symbols asked for cannot come sooner. Counted in
 * (at most half of it came off, as for an object's request) it left ~RTT/2 of "busy" time per
 * repair exchange for a few kilobytes: at 50 ms one way a segment with three repaired datagram
 * objects read ~20 % below the link (`qpr`'s estimate rose ~10 % without it; docs/results.md,
 * pass of 2026-11-28, "Repair round trips read as link time").
 *
 * The bytes are what the link delivered over those spans, whichever segment's delivery they were
 * for (`LinkBytes`, arrivals.ts): deliveries of different segments share the link — a segment's
 * datagram objects arrive beside the next segment's reliable ones, a segment asked for behind
 * another waits while the link carries the earlier one — and the link's rate while this segment
 * was owed bytes is what its next segments will meet. Counting only a segment's own bytes over
 * time it shared made both read low (`adaptive` ~0.8 × `qr`'s estimate on the LTE trace after an
 * outage, docs/results.md, pass of 2026-11-29, "Shared link time"); leaving out the time more
 * urgent deliveries of other segments were in flight — the model before — assumed the origin
 * serves strictly by urgency, which datagrams handed to quiche are not.
 * Nor is an outage that has ended link time (`outages`, outages.ts: the link owed bytes
 * and delivered next to nothing for longer than loss recovery takes): a segment straddling one
 * read as a link of a few hundred kbit/s, and kept the estimate there for `window` segments after
 * the link was back.
 * The estimate is the harmonic mean of the last `window` segments, which reacts quickly to drops
 * and slowly to spikes.
 */

import type { LinkBytes } from './arrivals';
import type { OutageSpan } from './outages';

/** One finished delivery: bytes received between request and last byte (ms timestamps). */
export interface DeliverySample {
  receivedBytes: number;
  startMs: number;
  endMs: number;
  /** Spans inside [startMs, endMs] in which the delivery waited on its own repair timer (DeliveryStats.repairWaits). */
  waits?: ReadonlyArray<readonly [number, number]>;
}

type Span = readonly [number, number];

/** `spans` less every part covered by `cut` (both lists of [start, end]). */
function subtract(spans: readonly Span[], cut: readonly Span[]): Span[] {
  let out: Span[] = [...spans];
  for (const [a, b] of cut) {
    out = out.flatMap(([s, e]): Span[] => (b <= s || a >= e ? [[s, e]] : [...(a > s ? [[s, a] as const] : []), ...(b < e ? [[b, e] as const] : [])]));
  }
  return out;
}

/**
 * The spans of a delivery in which the link owed it bytes: [startMs, endMs] less its waits and
 * the round trip (`roundTripMs`) of the repair request that ends each wait.
 */
function busySpans(s: DeliverySample, roundTripMs: number): Span[] {
  const spans: Span[] = [];
  let from = s.startMs;
  for (const [a, b] of [...(s.waits ?? [])].sort((x, y) => x[0] - y[0])) {
    const waitStart = Math.max(from, Math.min(a, s.endMs)), waitEnd = Math.max(waitStart, Math.min(b + roundTripMs, s.endMs));
    if (waitStart > from) spans.push([from, waitStart]);
    from = Math.max(from, waitEnd);
  }
  if (s.endMs > from) spans.push([from, s.endMs]);
  return spans;
}

/**
 * Goodput in bits/s of one segment's deliveries over their busy time less one `roundTripMs` per
 * busy period that begins with an object's request (the path's minimum RTT; 0 counts it in), the
 * round trip of each repair request and the link's outages (`outages`): the bytes `link` says
 * arrived in that time, over it. Without `link`, the deliveries' own bytes — right when they are
 * all the link carried (a whole run's deliveries). Null if nothing was busy.
 */
export function segmentGoodput(
  samples: DeliverySample[], roundTripMs = 0, link?: LinkBytes, outages: readonly OutageSpan[] = [],
): number | null {
  const roundTrip = Math.max(0, roundTripMs);
  const requestStarts = new Set(samples.map((s) => s.startMs));
  const intervals = samples
    .filter((s) => s.endMs > s.startMs)
    .flatMap((s) => subtract(busySpans(s, roundTrip), outages))
    .sort((a, b) => a[0] - b[0]);
  // Merged busy periods, each less its request's round trip if it begins with one (at most half
  // of it, so an inflated round trip cannot more than double a sample).
  const periods: Span[] = [];
  const close = (start: number, end: number) => {
    const cut = requestStarts.has(start) ? Math.min(roundTrip, (end - start) / 2) : 0;
    if (end - start - cut > 0) periods.push([start + cut, end]);
  };
  let curStart = -Infinity;
  let curEnd = -Infinity;
  for (const [start, end] of intervals) {
    if (start > curEnd) {
      if (curEnd > curStart) close(curStart, curEnd);
      curStart = start;
      curEnd = end;
    } else {
      curEnd = Math.max(curEnd, end);
    }
  }
  if (curEnd > curStart) close(curStart, curEnd);
  const busyMs = periods.reduce((sum, [a, b]) => sum + b - a, 0);
  if (busyMs <= 0) return null;
  const bytes = link
    ? periods.reduce((sum, [a, b]) => sum + link.between(a, b), 0)
    : samples.reduce((sum, s) => sum + s.receivedBytes, 0);
  return (bytes * 8 * 1000) / busyMs;
}

/** Sliding-window harmonic mean of per-segment goodput. */
export class ThroughputEstimator {
  private readonly history: number[] = [];

  constructor(private readonly window = 5) {
    if (!Number.isInteger(window) || window < 1) throw new Error(`window must be a positive integer, got ${window}`);
  }

  /**
   * Records one segment's deliveries (`roundTripMs`, `link`, `outages`: segmentGoodput's).
   * Segments with no busy time are ignored. Returns the segment's sample (bit/s), null if none.
   */
  addSegment(samples: DeliverySample[], roundTripMs = 0, link?: LinkBytes, outages: readonly OutageSpan[] = []): number | null {
    const g = segmentGoodput(samples, roundTripMs, link, outages);
    if (g === null || g <= 0) return null;
    this.history.push(g);
    if (this.history.length > this.window) this.history.shift();
    return g;
  }

  /** Estimated bits/s, or null before the first measured segment. */
  estimate(): number | null {
    if (this.history.length === 0) return null;
    return this.history.length / this.history.reduce((sum, g) => sum + 1 / g, 0);
  }
}
