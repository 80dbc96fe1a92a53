/**
 * Round-trip time from REQUEST → RESPONSE times (WebTransport in Chromium has no getStats).
 *
 * A response waits behind whatever more urgent data the origin is sending and behind the
 * bottleneck queue, so single samples overstate the RTT by up to seconds on a busy link; the
 * estimate is the minimum of the recent samples (as BBR's min_rtt), which the least delayed
 * response of each window sets. Repair on demand waits about one RTT after SENT: an inflated
 * estimate made it give up on objects it still had time to repair.
 */
export class RttEstimator {
  private readonly samples: number[] = [];

  constructor(private readonly window = 16, private readonly initialMs = 50) {}

  add(ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) return;
    this.samples.push(ms);
    if (this.samples.length > this.window) this.samples.shift();
  }

  /** Milliseconds: the smallest recent sample (the initial guess before any). */
  get ms(): number {
    return this.samples.length ? Math.min(...this.samples) : this.initialMs;
  }
}
