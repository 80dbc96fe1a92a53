/**
 * The frames on screen: which frame of each object the renderer draws now. The playout loop hands
 * over each segment it shows (placed on the timeline at k·D, so after a seek into it the frame
 * shown is the target's, not its first); the renderer asks many times per content frame (display
 * rate ≠ 30 fps) and is answered from the played position, which stands still during freezes and
 * pauses, so objects stand still too.
 */
import type { DecodedSegment } from '../model/decoder';
import type { DecodedFrame } from '../model/frames';
import type { SceneObject } from '../model/scene';
import type { ShownObject } from './playoutEvents';

/** What the renderer draws for one object now. */
export interface CurrentFrame {
  frame: DecodedFrame;
  quality: number;
  /** Index of the frame within its segment. */
  frameIndex: number;
  /** The segment's index on the timeline (pass.ts: segment k of pass p is p · segments per pass + k). */
  segment: number;
  /** True when the object's latest segment did not arrive in time and its last frame is held. */
  stale: boolean;
}

/** What the player shows of one object now. */
export interface ObjectPlayback {
  decoded: DecodedSegment;
  quality: number;
  /** Played seconds (timeline) at which the segment starts. */
  startedAt: number;
  stale: boolean;
  /** The segment's index on the timeline. */
  segment: number;
}

/** The frame of a segment that plays at `played` seconds: frames spread evenly over the segment. */
export function frameIndexAt(playedS: number, segmentStartS: number, segmentS: number, frames: number): number {
  return Math.min(frames - 1, Math.max(0, Math.floor(((playedS - segmentStartS) / segmentS) * frames + 1e-9)));
}

export class FramesOnScreen {
  private readonly showing = new Map<string, ObjectPlayback>();
  private readonly now = new Map<string, CurrentFrame | null>();

  /** What each object shows, for the stats. */
  get playback(): ReadonlyMap<string, ObjectPlayback> {
    return this.showing;
  }

  /** Some object has a frame to show. */
  get hasFrame(): boolean {
    return this.showing.size > 0;
  }

  /** Segment `k` (of `segmentS` seconds) started playing with these objects (null: keep the last frame). */
  show(k: number, shown: ReadonlyMap<string, ShownObject | null>, segmentS: number): void {
    const startedAt = k * segmentS;
    for (const [id, object] of shown) {
      if (object) {
        this.showing.set(id, { decoded: object.decoded, quality: object.quality, startedAt, stale: false, segment: k });
      } else {
        const held = this.showing.get(id);
        if (held) held.stale = true;
      }
    }
  }

  /**
   * What to draw now per object; null until the object's first segment is decoded. Called every
   * animation frame, so the map and its entries are reused: read them before the next call.
   */
  current(playedS: number, objects: readonly SceneObject[], segmentS: number): ReadonlyMap<string, CurrentFrame | null> {
    for (const object of objects) {
      const p = this.showing.get(object.id);
      if (!p || p.decoded.frames.length === 0) {
        this.now.set(object.id, null);
        continue;
      }
      const frames = p.decoded.frames;
      const frameIndex = p.stale ? frames.length - 1 : frameIndexAt(playedS, p.startedAt, segmentS, frames.length);
      const entry = this.now.get(object.id) ?? { frame: frames[frameIndex], quality: p.quality, frameIndex, stale: p.stale, segment: p.segment };
      entry.frame = frames[frameIndex];
      entry.quality = p.quality;
      entry.frameIndex = frameIndex;
      entry.stale = p.stale;
      entry.segment = p.segment;
      this.now.set(object.id, entry);
    }
    return this.now;
  }
}
