/**
 * Stall detection for one transport session: requests are waiting for bytes and none have come
 * for a while, though the session still reads as open.
 *
 * Why a player needs it on top of QUIC's own recovery: while nothing is acknowledged, QUIC
 * (RFC 9002) re-arms its probe timeout with exponential backoff, and quiche, our origin's QUIC,
 * sets no upper bound on it, so after a blackout of a few seconds a connection may wait about as
 * long again before it finds the path is back. A new session starts with fresh loss-recovery
 * state; the requests lost with the old one are asked for again. (The driving-trace stalls first
 * blamed on this were the emulator holding the link; with that fixed, the watch did not fire
 * there: docs/results.md → "Abandonment, stalled sessions, and a link the emulator held".)
 *
 * One watch per session: a request ends on the watch of the session it was made on.
 */

/**
 * Two seconds without a byte while requests wait: longer than any gap between packets of a link
 * that delivers at all (the driving trace's slowest seconds still carry 0.6 Mbit/s, a packet every
 * 20 ms), shorter than the 2-s buffer plus the time to reconnect and ask again.
 */
export const DEFAULT_STALL_TIMEOUT_MS = 2000;

/**
 * A gap this long between two checks means the page did not run on time (a long task): bytes
 * that came meanwhile may still be queued behind the check, so that check does not judge and the
 * next one does. Four times the 250-ms check interval; a hidden tab's timers, throttled to once a
 * second, still get every other check judged.
 */
export const PAGE_PAUSE_MS = 1000;

export class StallWatch {
  private waiting = 0;
  private lastProgressMs = 0;
  private lastCheckMs: number | undefined;
  /** The previous check came late and left the verdict to this one. */
  private deferred = false;

  /** @param timeoutMs how long requests may wait without a byte before the session counts as stalled */
  constructor(readonly timeoutMs: number) {
    if (!(timeoutMs > 0)) throw new Error(`stall timeout must be positive, got ${timeoutMs}`);
  }

  /**
   * A request starts waiting for bytes. Only the first of a waiting set starts the clock: requests
   * made during a stall (the player keeps asking for later segments) must not hide it.
   */
  begin(nowMs: number): void {
    if (this.waiting === 0) this.lastProgressMs = nowMs;
    this.waiting++;
  }

  /** A request no longer waits (done, failed or cancelled). */
  end(): void {
    this.waiting = Math.max(0, this.waiting - 1);
  }

  /** Bytes arrived on the session (any stream or datagram). */
  progress(nowMs: number): void {
    this.lastProgressMs = nowMs;
  }

  /**
   * Whether requests have waited `timeoutMs` without a byte. Call it periodically, more often than
   * `PAGE_PAUSE_MS`: a check that comes later than that after the previous one answers false and
   * leaves the verdict to the next.
   */
  stalled(nowMs: number): boolean {
    const late = this.lastCheckMs !== undefined && nowMs - this.lastCheckMs >= PAGE_PAUSE_MS && !this.deferred;
    this.lastCheckMs = nowMs;
    this.deferred = late;
    return !late && this.waiting > 0 && nowMs - this.lastProgressMs >= this.timeoutMs;
  }
}
