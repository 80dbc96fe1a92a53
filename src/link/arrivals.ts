/**
 * When the link's bytes arrived: every object byte the player received, whichever request it was
 * for, on the player's clock (to `ARRIVAL_MERGE_MS`), for the last 30 s.
 *
 * Why the throughput estimate reads the link's bytes and not only a segment's own (throughput.ts):
 * deliveries of different segments share the link. `adaptive`'s datagram objects of segment k
 * were still arriving while segment k+1's object in view came (their repair rounds, and the
 * datagrams already handed to quiche — up to a congestion window — go beside it), so each segment's
 * busy time held the other's bytes as well; counting only its own, both read low — on the LTE
 * trace at 10 ms one way `adaptive` planned from ~0.8 × `qr`'s estimate after an outage while
 * delivering more (docs/results.md, pass of 2026-11-29, "Shared link time"). The bytes that
 * arrived over a span are what the link carried in it, however the origin interleaved them.
 */

/**
 * Arrivals this close together (ms) are kept as one, at the later time: a bounded log at any rate
 * (≤ 1 000 entries a second), and the tolerance at a span's end — a delivery's last byte is
 * stamped by the transport just before the player records its bytes.
 */
export const ARRIVAL_MERGE_MS = 1;

/** How long arrivals are kept (ms): a segment is shown at most a buffer target plus an outage after its requests (as outages.ts keeps). */
const KEEP_MS = 30_000;

/** Something that says how many bytes the link delivered over a span of time (ms). */
export interface LinkBytes {
  between(fromMs: number, toMs: number): number;
}

export class ByteArrivals implements LinkBytes {
  /** Arrival times (ms, ascending), the time the first arrival merged into each began, and the running total of bytes up to and including each. */
  private readonly times: number[] = [];
  private readonly opened: number[] = [];
  private readonly totals: number[] = [];
  private total = 0;
  /** Bytes that came without a usable time: in the running total, in no span. */
  private unstamped = 0;
  /** The running total before the first kept arrival. */
  private base = 0;

  /** Bytes received so far, over every request: the running total the link watch samples. */
  get totalBytes(): number {
    return this.total + this.unstamped;
  }

  /** `bytes` arrived at `atMs`; a time before the last one's (another caller's clock reading) counts at the last. */
  add(bytes: number, atMs: number): void {
    if (!(bytes > 0)) return;
    if (!Number.isFinite(atMs)) {
      this.unstamped += bytes;
      return;
    }
    this.total += bytes;
    const n = this.times.length;
    if (n > 0 && atMs - this.opened[n - 1] <= ARRIVAL_MERGE_MS) {
      this.times[n - 1] = Math.max(this.times[n - 1], atMs);
      this.totals[n - 1] = this.total;
      return;
    }
    if (n > 0 && atMs < this.times[n - 1]) atMs = this.times[n - 1];
    this.times.push(atMs);
    this.opened.push(atMs);
    this.totals.push(this.total);
    // Old arrivals go in batches, so that pruning costs O(1) per arrival on average.
    if (this.times[0] < atMs - KEEP_MS - 5_000) {
      const drop = this.countUpTo(atMs - KEEP_MS);
      this.base = this.totals[drop - 1];
      this.times.splice(0, drop);
      this.opened.splice(0, drop);
      this.totals.splice(0, drop);
    }
  }

  /** Bytes that arrived after `fromMs` and by `toMs` (and up to `ARRIVAL_MERGE_MS` later). */
  between(fromMs: number, toMs: number): number {
    if (!(toMs > fromMs)) return 0;
    return this.totalBy(toMs + ARRIVAL_MERGE_MS) - this.totalBy(fromMs);
  }

  /** The running total of the arrivals at or before `ms`. */
  private totalBy(ms: number): number {
    const k = this.countUpTo(ms);
    return k > 0 ? this.totals[k - 1] : this.base;
  }

  /** How many kept arrivals are at or before `ms` (binary search). */
  private countUpTo(ms: number): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.times[mid] <= ms) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
