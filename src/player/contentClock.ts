/**
 * The content clock: seconds of content played, which stand still while playback is paused or
 * frozen, the pause itself, and the playout time of each segment. Segment k plays at
 * P(k) = start + k·D + (time spent frozen or paused before it).
 */
import type { Clock } from './clock';

export type HaltReason = 'pause' | 'freeze';

export class ContentClock {
  private startS = NaN;
  /** Seconds added to every later playout time by freezes and pauses. */
  private shift = 0;
  /**
   * Why the content clock stands still (a pause, a freeze, or both at once) and since when: the
   * time is added to `shift` once when the last reason ends, so an overlap is not counted twice.
   */
  private readonly halts = new Set<HaltReason>();
  private haltedSince = NaN;
  /** While paused: settles on resume. */
  private pauseGate: { promise: Promise<void>; release: () => void } | null = null;

  constructor(private readonly clock: Clock, private readonly segmentDurationS: number) {}

  /** Playback began now (segment 0 plays from here). */
  start(): void {
    this.startS = this.clock.now();
  }

  get started(): boolean {
    return Number.isFinite(this.startS);
  }

  /** When playback began, on the session clock (NaN before). */
  get startedAtS(): number {
    return this.startS;
  }

  get paused(): boolean {
    return this.pauseGate !== null;
  }

  /** Stops the content clock until `resume()`. */
  pause(): void {
    if (this.pauseGate) return;
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    this.pauseGate = { promise, release };
    this.halt('pause');
  }

  resume(): void {
    const gate = this.pauseGate;
    if (!gate) return;
    this.pauseGate = null;
    this.unhalt('pause');
    gate.release();
  }

  /** Resolves at once when playing, else on resume. */
  async whilePaused(): Promise<void> {
    if (this.pauseGate) await this.pauseGate.promise;
  }

  /** The clock stands still for `reason` (a freeze; a pause goes through `pause()`). */
  halt(reason: HaltReason): void {
    if (this.halts.size === 0) this.haltedSince = this.clock.now();
    this.halts.add(reason);
  }

  unhalt(reason: HaltReason): void {
    if (!this.halts.has(reason)) return;
    if (this.halts.size === 1) this.shift += this.haltedFor(this.clock.now());
    this.halts.delete(reason);
    if (this.halts.size === 0) this.haltedSince = NaN;
  }

  /** Seconds the content clock has stood still in the current halt (none before playback began). */
  haltedFor(now: number): number {
    if (this.halts.size === 0 || !this.started) return 0;
    return Math.max(0, now - Math.max(this.haltedSince, this.startS));
  }

  /** Seconds of content played so far (excluding freezes and pauses). */
  playedS(): number {
    if (!this.started) return 0;
    const now = this.clock.now();
    return Math.max(0, now - this.startS - this.shift - this.haltedFor(now));
  }

  /** When segment `k` plays, as things stand (a halt from now on moves it later). */
  playoutTime(k: number): number {
    return this.startS + k * this.segmentDurationS + this.shift;
  }
}
