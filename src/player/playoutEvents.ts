/**
 * What the playout loop tells the player: the plan of each segment, the frames to show when a
 * segment plays, and the events of playback (startup, freezes, abandonment, seeks, pass ends).
 */
import type { DecodedSegment } from '../model/decoder';
import type { PlanDelivery } from '../model/modes';
import type { FreezeCause } from './freezes';

export interface PlannedObject {
  segment: number;
  objectId: string;
  quality: number;
  delivery: PlanDelivery;
  rank: number;
  visibleArea: number;
}

export interface ShownObject {
  quality: number;
  decoded: DecodedSegment;
}

export type PlayoutEvent =
  | { type: 'started'; startupS: number }
  | { type: 'freeze-start'; atS: number; cause: FreezeCause }
  | { type: 'freeze-end'; atS: number; durationS: number }
  | { type: 'segment'; index: number; qualities: Record<string, number> }
  /** A reliable request given up: `replaced` by the lowest quality (in view), else dropped (out of view). */
  | { type: 'abandoned'; objectId: string; index: number; fromQuality: number; replaced: boolean }
  /** The latest seek's segment was shown (at `positionS` into the pass): once per seek not superseded by another. */
  | { type: 'seeked'; positionS: number; index: number }
  /** Playback went on from the end of a pass into the next (looping). */
  | { type: 'looped'; index: number }
  /**
   * Playback reached the end of what a growing scene has published and waits there (`waiting`
   * true), or goes on — the scene grew, or became final — (`waiting` false). Not a freeze.
   */
  | { type: 'live-edge'; waiting: boolean; atS: number }
  /** Playback reached the end of a pass without looping: it stands there until a seek. */
  | { type: 'ended'; atS: number }
  | { type: 'error'; message: string };
