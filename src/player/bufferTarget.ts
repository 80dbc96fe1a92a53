/**
 * How many seconds of content the player requests ahead of the playhead (docs/player.md →
 * "Buffer target").
 *
 * A longer buffer rides out a longer dip of the link, but every second of it is a second further
 * ahead that the viewport has to be predicted, and worse predictions cost visible quality. The
 * QoE experiments measured both sides (docs/results.md → "Probe after the matrix"): on the 5G
 * driving trace a 2-s buffer froze at every loss level in the 5-s trough where the link carried
 * less than half of the scene's lowest qualities, and 4 s rode it out; on the walking trace, whose
 * rate never falls that far, 4 s cost 0.12–0.18 of visible quality and saved nothing.
 *
 * So the target is the base (2 s) until the link shows a starved second — a second in which
 * requests were in flight throughout and the link delivered less than half of what the whole
 * scene needs at its lowest qualities, so no quality choice could have made up for it — and the
 * volatile target (4 s) for a while after it. The link is judged by `LinkWatch` (samples of the
 * bytes received every 50 ms), not per segment: a segment's goodput is measured over the time it
 * was in flight, so a 1-s outage inside a 2-s delivery only halves it, and hides. The memory is long because
 * volatility is a property of where the viewer is (a car, a train), not of one second: on the
 * driving trace the outages come 16–57 s apart, the first at 11 s.
 */
import type { BusyWindow } from '../link/linkWatch';
import type { QoeStarved } from '../model/qoe';

/**
 * A second in which the link delivered less than this share of the scene's lowest-quality rate is
 * starved. Half, not less: an outage is seen only while requests are in flight, and a player
 * whose requests take a third of each second sees a 1-s outage whole only by chance, so the
 * deep troughs that are not outages must count too. On the 5G driving trace scaled for the demo
 * (× 0.065) a quarter (0.4 Mbit/s) left one second before the 5-s trough at 106 s starved (33 s),
 * which 3 of 18 `adaptive` runs missed; half (0.8 Mbit/s) adds the trough at 49–50 s
 * (0.58 Mbit/s). The walking trace never falls below 1.85 Mbit/s, more than twice it
 * (docs/results.md, pass of 2026-11-28, third).
 */
export const STARVED_SHARE = 0.5;
/** Seconds after a starved second during which the link counts as volatile. */
export const VOLATILE_MEMORY_S = 120;

/** Starved windows kept, the first of each run of them: bounded memory on however volatile a link. */
export const STARVED_WINDOWS_KEPT = 100;

export interface BufferTargetOptions {
  /** Target on a steady link (seconds). */
  baseS: number;
  /** Target after the link starved (seconds); equal to `baseS` for a fixed target. */
  volatileS: number;
  /** Bit/s the scene needs with every object at its lowest quality. */
  sceneFloorBps: number;
}

/** The volatile target unless configured: twice the base (the 4-s probe's value for the 2-s default). */
export function volatileTargetS(baseS: number, configured?: number): number {
  return configured ?? 2 * baseS;
}

/** Throws unless `baseS` is positive and `volatileS` at least `baseS` (a finite number of seconds). */
export function checkBufferTargets(baseS: number, volatileS: number): void {
  if (!(baseS > 0 && Number.isFinite(baseS))) throw new Error(`buffer target must be a positive number of seconds, got ${baseS}`);
  if (!(volatileS >= baseS && Number.isFinite(volatileS))) {
    throw new Error(`volatile buffer target (${volatileS} s) must be at least the buffer target (${baseS} s)`);
  }
}

export class BufferTarget {
  private lastStarvedS = -Infinity;
  /** The previous observation was starved: the next starved one continues its run. */
  private inStarvedRun = false;
  /**
   * The first window of each run of starved ones, oldest first (at most `STARVED_WINDOWS_KEPT`),
   * as the QoE log keeps them; `atS` on the session clock.
   */
  readonly starved: QoeStarved[] = [];

  constructor(private readonly options: BufferTargetOptions) {
    checkBufferTargets(options.baseS, options.volatileS);
  }

  /**
   * The link watch's last window at `atS` if requests were in flight throughout it
   * (`LinkWatch.busyWindow`), or null when the link was idle at some point: a rate below the
   * starved share of the scene floor makes the window a starved second.
   */
  observe(atS: number, window: BusyWindow | null): void {
    const starved = window !== null && this.options.sceneFloorBps > 0 && window.rateBps < STARVED_SHARE * this.options.sceneFloorBps;
    if (starved && !this.inStarvedRun && this.starved.length < STARVED_WINDOWS_KEPT) this.starved.push({ atS, ...window });
    if (starved) this.lastStarvedS = atS;
    this.inStarvedRun = starved;
  }

  /** Whether a starved second was seen within the memory. */
  volatileAt(nowS: number): boolean {
    return nowS - this.lastStarvedS < VOLATILE_MEMORY_S;
  }

  /** Seconds of content to keep requested ahead at `nowS`. */
  targetS(nowS: number): number {
    return this.volatileAt(nowS) ? this.options.volatileS : this.options.baseS;
  }
}
