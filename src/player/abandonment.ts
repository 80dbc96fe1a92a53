/**
 * Abandoning reliable requests that will miss their deadline (docs/player.md → "Playout", step 6).
 *
 * A reliable object that is late freezes playback, so a request at a high quality that the link
 * can no longer deliver in time is cancelled and asked for again at a quality that can arrive —
 * dash.js's abandonment rule, with two differences that matter on a 5G trace:
 *  - the rate is the whole link's, measured over the last second while reliable requests were
 *    waiting, not the request's own: with urgency ordering a request may sit behind others and
 *    receive nothing for a while although the link is busy;
 *  - a request's arrival time counts the bytes queued before it (reliable requests of earlier
 *    deadlines and more urgent ones), as the origin serves them in that order.
 * The check runs continuously, not once shortly before the deadline: when the rate collapses
 * seconds before a deadline (the driving trace falls from 15 to 0.7 Mbit/s), switching early is
 * what leaves time for the lower quality to arrive.
 */

/**
 * The link's rate: bytes arrived on all requests over the last `windowS` while reliable requests
 * were waiting. Idle time never counts (the origin had nothing to send); between busy spans the
 * last span's rate stands, as the latest evidence of what the link carries.
 */
export class LinkRateMeter {
  private samples: Array<{ t: number; bytes: number }> = [];
  private lastSpanRate: number | null = null;

  /**
   * @param windowS how far back the rate looks
   * @param minSpanS the shortest busy span that gives a rate (less is noise, or the start of a request)
   */
  constructor(private readonly windowS = 1, private readonly minSpanS = 0.3) {}

  /** Called periodically with the total bytes arrived so far and whether a reliable request is waiting. */
  record(now: number, totalBytes: number, busy: boolean): void {
    if (!busy) {
      this.lastSpanRate = this.spanRate() ?? this.lastSpanRate;
      this.samples = [];
      return;
    }
    this.samples.push({ t: now, bytes: totalBytes });
    while (this.samples.length > 2 && this.samples[1].t <= now - this.windowS) this.samples.shift();
  }

  /** Bytes per second over the busy part of the window (or of the last busy span); null before any. */
  rate(): number | null {
    return this.spanRate() ?? this.lastSpanRate;
  }

  private spanRate(): number | null {
    if (this.samples.length < 2) return null;
    const first = this.samples[0], last = this.samples[this.samples.length - 1];
    const span = last.t - first.t;
    return span >= this.minSpanS ? (last.bytes - first.bytes) / span : null;
  }
}

/** A reliable request still arriving, in the order the origin serves it. */
export interface PendingReliable {
  deadline: number;
  quality: number;
  /** Bytes still to come (the expected size when the response has not said yet). */
  remainingBytes: number;
  /** Expected bytes of the object at each quality of its ladder. */
  bytesAtQuality: readonly number[];
}

export interface Abandonment {
  /** Index into the pending list. */
  index: number;
  /** The quality to ask for instead. */
  quality: number;
}

/**
 * Which pending reliable requests to replace, and by what quality. `pending` is in serving order
 * (earliest deadline, then most urgent). A request is replaced when, with the bytes before it,
 * it would arrive after its deadline at `rateBps` (bytes/s), and a lower quality would arrive
 * sooner: the highest one that still makes the deadline and that the rate sustains (one segment
 * of it in `segmentDurationS`: one that only fits by using the time the buffer holds would take
 * that time from the segments after it), else the lowest.
 */
export function planAbandonments(pending: readonly PendingReliable[], now: number, rateBps: number, segmentDurationS: number): Abandonment[] {
  const out: Abandonment[] = [];
  if (!(rateBps > 0)) return out;
  const sustained = rateBps * segmentDurationS;
  let queued = 0;
  pending.forEach((p, index) => {
    const arrives = now + (queued + p.remainingBytes) / rateBps;
    if (arrives <= p.deadline || p.quality === 0) {
      queued += p.remainingBytes;
      return;
    }
    let quality = 0;
    for (let q = p.quality - 1; q > 0; q--) {
      if (p.bytesAtQuality[q] <= sustained && now + (queued + p.bytesAtQuality[q]) / rateBps <= p.deadline) {
        quality = q;
        break;
      }
    }
    if (p.bytesAtQuality[quality] >= p.remainingBytes) {
      queued += p.remainingBytes;
      return;
    }
    out.push({ index, quality });
    queued += p.bytesAtQuality[quality];
  });
  return out;
}
