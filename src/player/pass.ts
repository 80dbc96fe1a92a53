/**
 * One pass of the scene as a media timeline. The playout loop plays the MPD's unbounded timeline
 * (segment k is file f(k) of each object, docs/mpd.md → "Loop"); what a page sees as `currentTime`
 * and `duration` is a position within one pass of it, `MPD@mediaPresentationDuration` long.
 * Looping plays the next pass of that timeline (identical to the first for `loop` objects of the
 * pass's length; `pingpong` objects go on back and forth); not looping stops at the pass's end.
 * The arithmetic is pure; `PassTimeline` keeps the little state it needs (the playout loop owns it).
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

/**
 * Where playback stands on the pass timeline: the pass being played, whether it loops, and the
 * landing of a seek still under way (until its segment is shown). The played position itself is
 * the content clock's (contentClock.ts); each method takes it.
 */
export class PassTimeline {
  /** The pass being played: where seeks land when not looping, and whose end playback stops at. */
  private pass = 0;
  private landing: SeekLanding | null = null;
  /** The scene still grows (sceneGrowth.ts): its end is a live edge to wait at, not a place to loop from. */
  private growing = false;

  constructor(private segmentCount: number, private readonly segmentS: number, private looping: boolean) {}

  /** Segments in a pass. */
  get segments(): number {
    return this.segmentCount;
  }

  /**
   * A newer manifest: the pass now has `segments` segments (never fewer), and the scene still
   * grows or is final. Positions already played keep their place: only the end moves.
   */
  grow(segments: number, growing: boolean): void {
    this.segmentCount = Math.max(this.segmentCount, segments);
    this.growing = growing;
  }

  /** The scene still grows: the end of the pass is where what is published ends, and playback waits there for more. */
  get grows(): boolean {
    return this.growing;
  }

  /** Length of a pass in seconds (a whole number of segments). */
  get passS(): number {
    return this.segments * this.segmentS;
  }

  /** Playback goes on into the next pass at the end (never while the scene grows). */
  get loop(): boolean {
    return this.looping && !this.growing;
  }

  /** The latest seek's landing while it is under way, else null. */
  get seekTarget(): SeekLanding | null {
    return this.landing;
  }

  /** A seek to `mediaS` seconds into the pass (`seekLanding`); it is under way until `seekDone()`. */
  seek(mediaS: number, playedS: number): SeekLanding {
    this.landing = seekLanding(mediaS, this.currentPass(playedS), this.segments, this.segmentS, this.loop);
    this.pass = this.landing.pass;
    return this.landing;
  }

  seekDone(): void {
    this.landing = null;
  }

  /** Looping on or off from now on (turning it off keeps the pass being played). */
  setLoop(loop: boolean, playedS: number): void {
    if (!loop && this.loop) this.pass = this.currentPass(playedS);
    this.looping = loop;
  }

  /** Seconds into the pass: what a page shows as the current time. */
  mediaPositionS(playedS: number): number {
    return mediaPosition(this.landing?.timelineS ?? playedS, this.pass, this.segments, this.segmentS, this.loop);
  }

  /** Segment `k` is the first of a pass. */
  startsPass(k: number): boolean {
    return k % this.segments === 0;
  }

  /** Segments `j` and `k` lie in the same pass. */
  samePass(j: number, k: number): boolean {
    return Math.floor(j / this.segments) === Math.floor(k / this.segments);
  }

  /** The pass the played position is in (looping), or the one being played. */
  private currentPass(playedS: number): number {
    if (!this.loop) return this.pass;
    return Math.floor((this.landing?.timelineS ?? playedS) / this.passS + 1e-9);
  }
}
