/**
 * The media-element vocabulary of `<holoquic-player>`: its error object (numbered like
 * `MediaError`), its ready states (numbered like `HTMLMediaElement`'s) and its typed event map,
 * so that `element.addEventListener('seeked', (e) => e.detail.currentTime)` is typed.
 */
import type { PlayerMode } from '../model/modes';
import type { QoeSegment } from '../model/qoe';
import { PLAYER_ERROR, type PlayerErrorCode, type PlayerState } from '../player/report';
import type { SceneGrowth } from '../player/sceneGrowth';
import type { TransportState } from '../transport/types';

/** What went wrong, as `HTMLMediaElement.error` describes it: a `MediaError`-like code and a message. */
export class HoloquicMediaError {
  static readonly MEDIA_ERR_ABORTED = PLAYER_ERROR.ABORTED;
  static readonly MEDIA_ERR_NETWORK = PLAYER_ERROR.NETWORK;
  static readonly MEDIA_ERR_DECODE = PLAYER_ERROR.DECODE;
  static readonly MEDIA_ERR_SRC_NOT_SUPPORTED = PLAYER_ERROR.SRC_NOT_SUPPORTED;

  constructor(readonly code: PlayerErrorCode, readonly message: string) {}

  /** The message, so that `${element.error}` reads as text. */
  toString(): string {
    return this.message;
  }
}

/** `HTMLMediaElement.readyState` values, and what each means for this player. */
export const READY_STATE = {
  /** No scene yet (before `loadedmetadata`). */
  HAVE_NOTHING: 0,
  /** The scene is known, but no frame of the current position is (before the first segment, or seeking). */
  HAVE_METADATA: 1,
  /** The current frame is shown but playback cannot go on yet (frozen: a reliable object is late). */
  HAVE_CURRENT_DATA: 2,
  /** Playing on is possible, with less than the buffer target ahead. */
  HAVE_FUTURE_DATA: 3,
  /** The buffer target (less a segment being filled) is ready ahead, or everything up to the end. */
  HAVE_ENOUGH_DATA: 4,
} as const;
export type ReadyState = (typeof READY_STATE)[keyof typeof READY_STATE];

/** `currentTime` when the event was dispatched. */
export interface TimeDetail { currentTime: number }

/** The element's events: every one a `CustomEvent` dispatched on the element. */
export interface HoloquicPlayerEventMap {
  // Media events, named and timed as HTMLMediaElement's.
  loadedmetadata: CustomEvent<{ duration: number }>;
  /** `duration` changed: a growing scene's newer manifest names more seconds. */
  durationchange: CustomEvent<{ duration: number }>;
  play: CustomEvent<TimeDetail>;
  playing: CustomEvent<TimeDetail>;
  pause: CustomEvent<TimeDetail>;
  waiting: CustomEvent<TimeDetail>;
  seeking: CustomEvent<TimeDetail>;
  seeked: CustomEvent<TimeDetail>;
  timeupdate: CustomEvent<TimeDetail>;
  ended: CustomEvent<TimeDetail>;
  error: CustomEvent<{ message: string; code: PlayerErrorCode }>;
  /** The qualities shown changed (per object id: index in its ladder, 0 = lowest). */
  qualitychange: CustomEvent<{ qualities: Record<string, number> }>;
  /** The transport carrying the requests, or its state, changed. */
  transportchange: CustomEvent<{ transport: 'webtransport' | 'http2' | null; state: TransportState | null; fallbackReason: string | null }>;
  // The player's own events.
  statechange: CustomEvent<{ state: PlayerState }>;
  started: CustomEvent<{ startupS: number }>;
  segment: CustomEvent<{ index: number; qualities: Record<string, number> }>;
  freeze: CustomEvent<{ type: 'freeze-start'; atS: number; cause: string } | { type: 'freeze-end'; atS: number; durationS: number }>;
  abandoned: CustomEvent<{ objectId: string; index: number; fromQuality: number; replaced: boolean }>;
  modechange: CustomEvent<{ mode: PlayerMode }>;
  transportstate: CustomEvent<{ state: TransportState }>;
  /** A growing scene's newer manifest extended it (sceneGrowth.ts → `SceneGrowth`). */
  scenegrow: CustomEvent<SceneGrowth>;
  /** Playback reached the end of what a growing scene has published and waits there (`waiting`), or goes on. */
  liveedge: CustomEvent<{ waiting: boolean }>;
  /** A re-read of a growing scene's manifest failed or was refused; playback goes on with the one it has. */
  manifesterror: CustomEvent<{ message: string }>;
  /**
   * A QoE record was written (one per object and segment, on the log's time base): every record
   * of the run, while `qoe()` keeps only the most recent (`qoe-kept`, docs/embedding.md → "QoE log").
   */
  qoesegment: CustomEvent<QoeSegment>;
}

/**
 * The events no built-in element has, for every element's `addEventListener` (a page that holds
 * the element as `HTMLElement`). Media events keep lib.dom's `Event` type there; the element's
 * own `addEventListener` overload types their detail.
 */
declare global {
  interface HTMLElementEventMap {
    qualitychange: HoloquicPlayerEventMap['qualitychange'];
    transportchange: HoloquicPlayerEventMap['transportchange'];
  }
}
