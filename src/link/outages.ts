/**
 * Where the link was out: spans in which requests owed bytes and the link delivered less than
 * `OUTAGE_BPS` for longer than loss recovery takes — a handover, a tunnel, a trace's zero-rate
 * seconds — and then came back. Not a rate the next segments will meet.
 *
 * Why the throughput estimate leaves them out (throughput.ts): a segment whose deliveries straddle
 * a 3-s outage reads as a link of a few hundred kbit/s, and the harmonic mean keeps such a sample
 * for `window` segments after the link is back. On the LTE driving trace at 50 ms one way,
 * `adaptive` delivered its in-view objects through the outage, learned 0.6 Mbit/s and chose the
 * lowest rung for five segments of a 2.5–3-Mbit/s link, where `qr`, whose outage deliveries
 * happened to lie behind a more urgent one, kept 2.5–3.0 (docs/results.md, pass of 2026-11-29).
 * Surviving an outage is the buffer's business (bufferTarget.ts); the estimate says what the link
 * carries while it is up.
 *
 * An outage need not be silent: the emulator's outage carries 50 kbit/s (tbf needs a positive
 * rate, scripts/net/topology.sh), a real one may trickle retransmissions. Only the part beyond
 * `OUTAGE_GRACE_S` comes out: shorter holds — a lost packet's retransmission holding a stream's
 * bytes back for a round trip or a probe timeout, a TCP retransmission timeout — are what loss
 * costs the link, and count. And only an outage that has ended: a link that stays below
 * `OUTAGE_BPS` is the link, and the estimate must follow it down.
 */

/**
 * Bit/s under which the link counts as out: a tenth of the smallest rung of the demo's objects
 * (~0.4 Mbit/s; no segment can arrive in time at this rate), twice the emulator's outage rate,
 * and under the slowest seconds of the scaled traces that are not outages (0.2 Mbit/s).
 */
export const OUTAGE_BPS = 100e3;

/**
 * Seconds of a low-rate span that still count as link time: above the longest hold loss recovery
 * causes at the round trips the player meets (a probe timeout plus the retransmission's round trip
 * at 50 ms one way is ~0.3–0.4 s), well below the outages of the cellular traces (1–3 s).
 */
export const OUTAGE_GRACE_S = 0.5;

/**
 * Longest gap between two samples that still observes the link (seconds): samples run on the
 * page's main thread, and over a longer gap the page was busy — bytes that arrived may not have
 * been counted yet, so the gap says nothing about the link and ends a span.
 */
export const OUTAGE_MAX_SAMPLE_GAP_S = 0.2;

/** Seconds of outages kept: a segment is shown at most a buffer target plus an outage after its requests. */
const KEEP_S = 30;

/** [start, end] in ms on the samples' clock (× 1000): the part of an outage that is not link time. */
export type OutageSpan = readonly [number, number];

interface Sample {
  atS: number;
  bytes: number;
}

export class LinkOutages {
  private last: Sample | null = null;
  /** Where the current low-rate span began (null when none is open). */
  private from: Sample | null = null;
  /** Its last sample at which the rate since `from` was still under `OUTAGE_BPS`. */
  private lowUntil: Sample | null = null;
  private readonly spans: OutageSpan[] = [];

  /** One sample: the running total of bytes received, and whether a request owed bytes. */
  sample(atS: number, receivedBytes: number, busy: boolean): void {
    const prev = this.last;
    const now = { atS, bytes: receivedBytes };
    this.last = now;
    const observed = prev !== null && atS - prev.atS <= OUTAGE_MAX_SAMPLE_GAP_S;
    if (!busy || !observed) {
      // Nothing owed, or the page was not watching: the link said nothing, and no span ends in an
      // outage it did not see end.
      this.from = busy ? now : null;
      this.lowUntil = this.from;
      return;
    }
    if (!this.from) {
      this.from = prev;
      this.lowUntil = prev;
    }
    const low = (receivedBytes - this.from!.bytes) * 8 <= OUTAGE_BPS * (atS - this.from!.atS);
    if (low) {
      this.lowUntil = now;
      return;
    }
    // The link delivers again: the low span before this sample, if long enough, was an outage.
    const span = beyondGrace(this.from!.atS, this.lowUntil!.atS);
    if (span) {
      this.spans.push(span);
      while (this.spans[0][1] < (atS - KEEP_S) * 1000) this.spans.shift();
    }
    this.from = now;
    this.lowUntil = now;
  }

  /** The outages (less their grace) that have ended, and end after `sinceMs`. */
  spansSince(sinceMs: number): OutageSpan[] {
    return this.spans.filter(([, end]) => end > sinceMs);
  }
}

function beyondGrace(fromS: number, toS: number): OutageSpan | null {
  return toS - fromS > OUTAGE_GRACE_S ? [(fromS + OUTAGE_GRACE_S) * 1000, toS * 1000] : null;
}
