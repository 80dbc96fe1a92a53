/**
 * The throughput estimate the ABR rules budget with.
 *
 * What is measured is the link, not a segment: the bytes received over every request, over the
 * time at least one request was in flight (`BusyMeter`), read once per segment. Measuring each
 * segment's bytes over its own requests' span instead reads low whenever segments overlap —
 * and with requests made two segments ahead, urgency ordering at the origin and datagram objects
 * that travel behind more urgent reliable ones until their deadline, they overlap all the time:
 * on the 5G driving trace at 5 % loss that estimate was half the rate the link delivered while
 * busy for `qpr-fec`, three quarters for `qr` (docs/results.md → "The throughput estimate").
 * Idle time between requests never dilutes the reading.
 *
 * The estimate is the harmonic mean of the last `window` readings, which reacts quickly to drops
 * and slowly to spikes.
 */

/** Bytes received and time busy, counted across every request. */
export class BusyMeter {
  private inFlight = 0;
  private busySince = 0;
  /** Seconds of busy periods that have ended. */
  private closedBusyS = 0;
  private bytes = 0;
  private taken = { busyS: 0, bytes: 0 };

  /** A request was sent at `nowS` (seconds). */
  begin(nowS: number): void {
    if (this.inFlight++ === 0) this.busySince = nowS;
  }

  /** A request ended at `nowS`: answered, failed or given up. */
  end(nowS: number): void {
    if (this.inFlight === 0) throw new Error('BusyMeter.end without a matching begin');
    if (--this.inFlight === 0) this.closedBusyS += Math.max(0, nowS - this.busySince);
  }

  /** Bytes of any request arrived (repair symbols and bytes of requests later given up included). */
  add(bytes: number): void {
    this.bytes += Math.max(0, bytes);
  }

  /**
   * Bit/s received over the busy time since the last reading, or null when the link was busy for
   * less than `minBusyS` since then (the time carries over to the next reading).
   */
  take(nowS: number, minBusyS = 0.02): number | null {
    const busyS = this.closedBusyS + (this.inFlight > 0 ? Math.max(0, nowS - this.busySince) : 0);
    const dBusy = busyS - this.taken.busyS;
    if (dBusy < minBusyS) return null;
    const dBytes = this.bytes - this.taken.bytes;
    this.taken = { busyS, bytes: this.bytes };
    return (dBytes * 8) / dBusy;
  }
}

/** Sliding-window harmonic mean of goodput readings. */
export class ThroughputEstimator {
  private readonly history: number[] = [];

  constructor(private readonly window = 5) {
    if (!Number.isInteger(window) || window < 1) throw new Error(`window must be a positive integer, got ${window}`);
  }

  /** Records one reading (bit/s); readings of nothing (≤ 0, not finite) are ignored. */
  add(bps: number): void {
    if (!(bps > 0) || !Number.isFinite(bps)) return;
    this.history.push(bps);
    if (this.history.length > this.window) this.history.shift();
  }

  /** Estimated bits/s, or null before the first reading. */
  estimate(): number | null {
    if (this.history.length === 0) return null;
    return this.history.length / this.history.reduce((sum, g) => sum + 1 / g, 0);
  }
}
