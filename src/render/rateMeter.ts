/**
 * Events per second over the last second, from a fixed ring of timestamps (no allocation per
 * event: it ticks at display rate).
 */
export class RateMeter {
  private readonly times: Float64Array;
  private next = 0;
  private filled = 0;

  constructor(capacity = 256) {
    this.times = new Float64Array(capacity);
  }

  /** Records one event at `nowMs`. */
  tick(nowMs: number): void {
    this.times[this.next] = nowMs;
    this.next = (this.next + 1) % this.times.length;
    this.filled = Math.min(this.filled + 1, this.times.length);
  }

  /** Events in the second before `nowMs` (default: now); saturates at the ring's capacity. */
  perSecond(nowMs = performance.now()): number {
    let count = 0;
    for (let i = 0; i < this.filled; i++) if (nowMs - this.times[i] <= 1000) count++;
    return count;
  }
}
