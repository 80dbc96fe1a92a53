/**
 * Freeze (stall) accounting. A freeze starts when playback needs a segment that is not ready
 * (buffer underrun, a session outage, or objects that arrived but are still being decoded) and
 * ends when playback resumes; each freeze is counted once with its duration and cause, so a
 * reconnect shows up in the same metric as a stall.
 */
import type { FreezeCause } from '../model/qoe';

export type { FreezeCause };

export interface Freeze {
  cause: FreezeCause;
  startMs: number;
  durationMs: number;
}

export class FreezeTracker {
  private readonly done: Freeze[] = [];
  private open: { cause: FreezeCause; startMs: number } | null = null;

  /** Starts a freeze; a freeze already in progress continues (it is one freeze, not two). */
  begin(cause: FreezeCause, nowMs: number): void {
    if (this.open === null) this.open = { cause, startMs: nowMs };
  }

  /** Names the cause of the freeze in progress once it is known better (e.g. the session was lost). */
  setCause(cause: FreezeCause): void {
    if (this.open !== null) this.open.cause = cause;
  }

  /** Ends the freeze in progress, if any. */
  end(nowMs: number): void {
    if (this.open === null) return;
    if (nowMs < this.open.startMs) throw new Error(`freeze cannot end (${nowMs}) before it began (${this.open.startMs})`);
    this.done.push({ ...this.open, durationMs: nowMs - this.open.startMs });
    this.open = null;
  }

  get frozen(): boolean {
    return this.open !== null;
  }

  /** Finished freezes plus, if `nowMs` is given, the one in progress up to now. */
  summary(nowMs?: number): { count: number; totalMs: number; freezes: Freeze[] } {
    const freezes = [...this.done];
    if (this.open !== null && nowMs !== undefined) {
      freezes.push({ ...this.open, durationMs: Math.max(0, nowMs - this.open.startMs) });
    }
    return { count: freezes.length, totalMs: freezes.reduce((s, f) => s + f.durationMs, 0), freezes };
  }
}
