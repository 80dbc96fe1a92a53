/**
 * What the link delivers right now, from quarter-second samples of the bytes received.
 *
 * The throughput estimate (throughput.ts) learns from finished segments only, so while the link
 * stalls it keeps the rate of the last segments that did finish: on the 5G driving trace the
 * player asked for the top qualities (730 kB a segment) for two seconds after the link fell from
 * 60 to 2.5 Mbit/s, because nothing had finished to say otherwise. The watch fills that gap: over
 * the last window, if requests were in flight at every sample, the bytes received are what the
 * link could deliver, and a rate below the estimate is the newer truth.
 */

/**
 * Window over which the link is judged (seconds): shorter than a second, so that a 1-s outage is
 * caught whatever its phase against the quarter-second samples; long enough to hold three of them.
 */
export const LINK_WINDOW_S = 0.75;

export class LinkWatch {
  /** Samples, oldest first, covering at most the last window. */
  private samples: Array<{ atS: number; bytes: number; busy: boolean }> = [];

  /**
   * One sample at `atS`: the bytes received so far over every request (a running total) and
   * whether a request was in flight (bytes were expected).
   */
  sample(atS: number, receivedBytes: number, busy: boolean): void {
    const last = this.samples[this.samples.length - 1];
    if (last && (atS <= last.atS || receivedBytes < last.bytes)) {
      throw new Error(`link samples must move forward (at ${atS} s after ${last.atS} s, ${receivedBytes} B after ${last.bytes} B)`);
    }
    this.samples.push({ atS, bytes: receivedBytes, busy });
    while (this.samples.length > 1 && atS - this.samples[1].atS >= LINK_WINDOW_S) this.samples.shift();
  }

  /**
   * Bit/s delivered over the last window if requests were in flight throughout it, else null
   * (an idle link says nothing about its rate).
   */
  busyRateBps(): number | null {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || last.atS - first.atS < LINK_WINDOW_S || !this.samples.every((s) => s.busy)) return null;
    return ((last.bytes - first.bytes) * 8) / (last.atS - first.atS);
  }
}
