/**
 * One pass of the scene as a media timeline. The playout loop plays the MPD's unbounded timeline
 * (segment k is file f(k) of each object, docs/mpd.md → "Loop"); what a page sees as `currentTime`
 * and `duration` is a position within one pass of it, `MPD@mediaPresentationDuration` long.
 * Looping plays the next pass of that timeline (identical to the first for `loop` objects of the
 * pass's length; `pingpong` objects go on back and forth); not looping stops at the pass's end.
 * Pure arithmetic: the playout loop (playout.ts) keeps the state.
 */
import type { SceneModel } from '../model/scene';

/** Segments in one pass: the pass duration in whole segments (at least one). */
export function passSegments(scene: Pick<SceneModel, 'passDuration' | 'segmentDuration'>): number {
  return Math.max(1, Math.round(scene.passDuration / scene.segmentDuration));
}

/** Where a seek lands: the played position on the timeline and the segment shown first. */
export interface SeekLanding {
  /** Seconds on the unbounded timeline. */
  timelineS: number;
  /** The pass the position belongs to (the one a later seek moves within). */
  pass: number;
  /** The segment whose frames are shown first (the one holding the position, or the pass's last at its end). */
  segment: number;
}

/**
 * A seek to `mediaS` seconds into pass `pass` (`segments` segments of `segmentS` each), clamped to
 * the pass as `HTMLMediaElement` clamps to [0, duration]. At the very end, a looping scene lands on
 * the start of the next pass (the loop restarts there); one that does not loop lands on the end,
 * showing the pass's last frame, where playback ends.
 */
export function seekLanding(mediaS: number, pass: number, segments: number, segmentS: number, loop: boolean): SeekLanding {
  const passS = segments * segmentS;
  const media = Math.min(passS, Math.max(0, Number.isFinite(mediaS) ? mediaS : 0));
  if (media >= passS && loop) return { timelineS: (pass + 1) * passS, pass: pass + 1, segment: (pass + 1) * segments };
  const timelineS = pass * passS + media;
  // A tiny epsilon keeps a position computed as k·D − rounding in segment k.
  const segment = Math.min((pass + 1) * segments - 1, Math.floor(timelineS / segmentS + 1e-9));
  return { timelineS, pass, segment };
}

/**
 * The media position (seconds into the pass) of a played position on the timeline. A looping
 * scene's pass is the one the position is in; otherwise `pass` (the one being played), whose
 * end the position stays at once reached.
 */
export function mediaPosition(timelineS: number, pass: number, segments: number, segmentS: number, loop: boolean): number {
  const passS = segments * segmentS;
  if (loop) return timelineS - Math.floor(timelineS / passS + 1e-9) * passS;
  return Math.min(passS, Math.max(0, timelineS - pass * passS));
}
