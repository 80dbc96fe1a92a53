/**
 * The content clock: the played position on the scene's timeline (seconds of content), which
 * stands still while playback is paused, frozen, seeking or at the end of a pass, the pause
 * itself, and the playout time of each segment. Segment k plays at
 * P(k) = start + k·D + shift, where the shift is the time spent standing still before it minus
 * where playback started (a seek moves it: the played position jumps to the target).
 */
import type { Clock } from './clock';

/**
 * Why the clock stands still: a pause, a freeze (a reliable object late), a seek (until the
 * target's frame is ready), the end of a pass that does not loop (until a seek), or the live edge
 * of a growing scene (until a newer manifest names what comes next).
 */
export type HaltReason = 'pause' | 'freeze' | 'seek' | 'end' | 'edge';

export class ContentClock {
  private startS = NaN;
  /** Seconds added to every later playout time: time stood still, minus the positions jumped to. */
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

  /** Playback began now, at `positionS` on the timeline (0: segment 0 plays from here). */
  start(positionS = 0): void {
    this.startS = this.clock.now();
    this.shift = -positionS;
  }

  /**
   * A seek: the played position becomes `positionS` now and stands there until `unhalt('seek')`
   * (the target's frame is ready). A halt under way ends here — its time is absorbed by the new
   * shift — but its reason stays (a pause stays a pause), except the end of a pass, which a seek
   * leaves. Only after `start()`.
   */
  seek(positionS: number): void {
    const now = this.clock.now();
    this.halts.delete('end');
    if (this.halts.size > 0) this.haltedSince = now;
    this.shift = now - this.startS - positionS;
    this.halt('seek');
  }

  /** Whether the clock stands still for `reason`. */
  haltedBy(reason: HaltReason): boolean {
    return this.halts.has(reason);
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

  /** The clock stands still for `reason` (a pause goes through `pause()`, a seek through `seek()`). */
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

  /** The played position: seconds on the timeline (content played, plus where playback started or last seeked to). */
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
