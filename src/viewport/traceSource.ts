import type { Pose, PoseSource } from '../model/pose';
import { parseTrace, type TraceConvention } from './trace';

/** The wall clock and timer a replay runs on; injectable so tests can drive time by hand. */
export interface ReplayClock {
  /** Milliseconds on any monotonic clock (default `performance.now()`). */
  now(): number;
  /** Calls `fn` after about `ms` milliseconds; returns a cancel function. */
  after(ms: number, fn: () => void): () => void;
}

const DUE_TOLERANCE_MS = 1e-3;

const REAL_CLOCK: ReplayClock = {
  now: () => performance.now(),
  after: (ms, fn) => {
    const id = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(id);
  },
};

export interface TracePoseSourceOptions {
  /** Start over at the end, forever (default false: the replay stops after the last pose). */
  loop?: boolean;
  clock?: ReplayClock;
}

/**
 * Replays a recorded pose trace in real time: the pose with trace time `t` is emitted
 * `t − t₀` after `start()`. Samples are emitted with their own trace times, so predictors see
 * the trace's true (possibly uneven) spacing whatever the timer jitter.
 *
 * With `loop`, each pass continues where the last ended: its times are shifted by the trace span
 * plus one mean sample interval, so emitted times keep increasing (predictors reject time going
 * back). The seam is a jump in pose, which a predictor sees as one fast movement.
 *
 * A late timer (background tab) emits every pose that is due at once, in order, rather than
 * skipping any.
 */
export class TracePoseSource implements PoseSource {
  private readonly poses: readonly Pose[];
  private readonly loop: boolean;
  private readonly clock: ReplayClock;
  /** Time shift between consecutive passes of a looping replay, seconds. */
  private readonly period: number;

  constructor(poses: readonly Pose[], options: TracePoseSourceOptions = {}) {
    if (poses.length === 0) throw new Error('TracePoseSource: the trace has no poses');
    for (let i = 1; i < poses.length; i++) {
      if (!(poses[i].t > poses[i - 1].t)) {
        throw new Error(`TracePoseSource: pose ${i} at ${poses[i].t} s is not after ${poses[i - 1].t} s`);
      }
    }
    this.poses = poses;
    this.loop = options.loop ?? false;
    this.clock = options.clock ?? REAL_CLOCK;
    const span = poses[poses.length - 1].t - poses[0].t;
    this.period = poses.length > 1 ? span + span / (poses.length - 1) : 1 / 30;
  }

  /**
   * Parses a `t_seconds,x,y,z,qx,qy,qz,qw` CSV (see {@link parseTrace}); `convention` says whether
   * it is already in the WebXR frame or in Unity's left-handed one (both bundled datasets are).
   */
  static fromCsv(
    text: string,
    options: TracePoseSourceOptions & { convention: TraceConvention; source?: string },
  ): TracePoseSource {
    return new TracePoseSource(parseTrace(text, { convention: options.convention, source: options.source }), options);
  }

  start(emit: (pose: Pose) => void): () => void {
    const startedAt = this.clock.now();
    const t0 = this.poses[0].t;
    let index = 0;
    let pass = 0;
    let cancel: (() => void) | null = null;
    let stopped = false;

    /** Emission time of the next pose, ms after start. */
    const dueMs = () => (this.poses[index].t - t0 + pass * this.period) * 1000;

    const tick = () => {
      cancel = null;
      const elapsed = this.clock.now() - startedAt;
      // The tolerance absorbs rounding in `t − t₀` so a timer fired exactly on time emits its pose
      // instead of re-arming for a sub-nanosecond remainder.
      while (!stopped && dueMs() <= elapsed + DUE_TOLERANCE_MS) {
        const p = this.poses[index];
        emit(pass === 0 ? p : { ...p, t: p.t + pass * this.period });
        index++;
        if (index === this.poses.length) {
          if (!this.loop) return;
          index = 0;
          pass++;
        }
      }
      if (!stopped) cancel = this.clock.after(dueMs() - elapsed, tick);
    };
    tick();
    return () => {
      stopped = true;
      cancel?.();
      cancel = null;
    };
  }
}
