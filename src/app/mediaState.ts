/**
 * The element's media state computed from the player's: `buffered` as a `TimeRanges`-like object
 * over the pass, and `readyState`, from a snapshot of the player. Pure, so it is unit-tested
 * without a browser.
 */
import type { Player } from '../player/player';
import { READY_STATE, type ReadyState } from './mediaTypes';

/** A read-only list of time ranges, as `HTMLMediaElement.buffered` returns (`TimeRanges`). */
export class HoloquicTimeRanges {
  constructor(private readonly ranges: ReadonlyArray<readonly [number, number]>) {}

  get length(): number {
    return this.ranges.length;
  }

  start(index: number): number {
    return this.at(index)[0];
  }

  end(index: number): number {
    return this.at(index)[1];
  }

  private at(index: number): readonly [number, number] {
    const range = this.ranges[index];
    if (!range) throw new DOMException(`no time range ${index} (length ${this.ranges.length})`, 'IndexSizeError');
    return range;
  }
}

/** What the buffered ranges and the ready state are computed from. */
export interface MediaSnapshot {
  /** The scene is loaded (duration known). */
  hasScene: boolean;
  /** A frame of the current position is shown (false before the first segment and while seeking). */
  hasFrame: boolean;
  frozen: boolean;
  /** Seconds into the pass, and the pass's length. */
  positionS: number;
  durationS: number;
  segmentS: number;
  /** Seconds decoded ahead of the position (the playout loop's `bufferedS`). */
  aheadS: number;
  bufferTargetS: number;
  loop: boolean;
}

/**
 * The snapshot of the element's `player` (null before it has one). `element` gives what the
 * element knows itself: its position and duration, whether it reads as frozen, and its `loop`
 * attribute, which counts while there is no player.
 */
export function snapshotOf(player: Player | null, element: { positionS: number; durationS: number; frozen: boolean; loop: boolean }): MediaSnapshot {
  const scene = player?.scene ?? null;
  return {
    hasScene: scene !== null, hasFrame: !!player?.hasFrame && !player.seeking, frozen: element.frozen,
    positionS: element.positionS, durationS: element.durationS, segmentS: scene?.segmentDuration ?? 1,
    aheadS: player?.bufferedAheadS() ?? 0, bufferTargetS: player?.bufferTargetS() ?? 0, loop: player?.loop ?? element.loop,
  };
}

/**
 * The decoded content around the position in media time: from the start of the segment shown to
 * as far as decoding reaches; when looping, what lies beyond the end is the next pass's start.
 */
export function bufferedRanges(s: MediaSnapshot): HoloquicTimeRanges {
  if (!s.hasScene || !s.hasFrame) return new HoloquicTimeRanges([]);
  const start = Math.min(Math.floor(s.positionS / s.segmentS + 1e-9) * s.segmentS, Math.max(0, s.durationS - s.segmentS));
  const end = s.positionS + Math.max(0, s.aheadS);
  if (end <= s.durationS || !s.loop) return new HoloquicTimeRanges([[start, Math.min(end, s.durationS)]]);
  const wrapped = Math.min(start, end - s.durationS);
  if (wrapped >= start) return new HoloquicTimeRanges([[0, s.durationS]]);
  return new HoloquicTimeRanges([[0, wrapped], [start, s.durationS]]);
}

/** `readyState` (`READY_STATE` says what each value means here). */
export function readyStateOf(s: MediaSnapshot): ReadyState {
  if (!s.hasScene) return READY_STATE.HAVE_NOTHING;
  if (!s.hasFrame) return READY_STATE.HAVE_METADATA;
  if (s.frozen) return READY_STATE.HAVE_CURRENT_DATA;
  const toEnd = s.loop ? Infinity : s.durationS - s.positionS;
  // The loop keeps about the target requested ahead, one segment of it still arriving.
  if (s.aheadS + 1e-6 >= Math.min(toEnd, s.bufferTargetS - s.segmentS) && s.aheadS > 0) return READY_STATE.HAVE_ENOUGH_DATA;
  return s.aheadS > 0 ? READY_STATE.HAVE_FUTURE_DATA : READY_STATE.HAVE_CURRENT_DATA;
}
