/**
 * What the link delivers right now, from frequent samples of the bytes received (every 50 ms,
 * inFlightWatch.ts): over the
 * last window, if requests were in flight at every sample, the bytes received are what the link
 * delivered while bytes were owed (the buffer target's starved second, bufferTarget.ts).
 *
 * Not a throughput estimate for the ABR: capping the estimate by this rate was tried twice and
 * lowered visible quality by about 0.4 on the driving trace (docs/results.md) — once a stall has
 * made the plans small, small objects never show the link's rate again, and the cap feeds on itself.
 */

/**
 * Window over which the link is judged (seconds): shorter than a second, so that a 1-s outage is
 * caught while its requests are in flight from within 0.2 s of its start (a window opens at the first
 * sample after the request, at most one sample period later); long enough to span many samples.
 */
export const LINK_WINDOW_S = 0.75;

/** What the link watch saw over a window in which requests were in flight throughout. */
export interface BusyWindow {
  /** Bit/s delivered over the window. */
  rateBps: number;
  /** Seconds from the window's first sample to its last. */
  spanS: number;
  /** Bytes received over the window. */
  bytes: number;
  /**
   * The longest time between two consecutive samples (seconds). Samples are taken on the page's
   * main thread: far above the sample period, the page was busy and the bytes of that time may
   * not have been counted yet — the page, not the link, was late. Kept so that the QoE log can
   * show which starved windows were seen that way (docs/qoe.md → "QoE log").
   */
  maxGapS: number;
}

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
   * The last window if requests were in flight throughout it, else null (an idle link says
   * nothing about its rate).
   */
  busyWindow(): BusyWindow | null {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || last.atS - first.atS < LINK_WINDOW_S || !this.samples.every((s) => s.busy)) return null;
    let maxGapS = 0;
    for (let i = 1; i < this.samples.length; i++) maxGapS = Math.max(maxGapS, this.samples[i].atS - this.samples[i - 1].atS);
    const bytes = last.bytes - first.bytes;
    const spanS = last.atS - first.atS;
    return { rateBps: (bytes * 8) / spanS, spanS, bytes, maxGapS };
  }

  /** Bit/s delivered over the last window if requests were in flight throughout it, else null. */
  busyRateBps(): number | null {
    return this.busyWindow()?.rateBps ?? null;
  }
}
