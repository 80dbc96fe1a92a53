/**
 * What an application configures a `Player` with, and the checks that refuse a bad configuration
 * before anything is loaded (a typo in a mode or rule name fails at once, not mid-play).
 */
import type { SegmentDecoder } from '../model/decoder';
import { PLAYER_MODES, type PlayerMode } from '../model/modes';
import type { PoseDrivenViewport } from '../model/pose';
import type { QoeSegment } from '../model/qoe';
import type { SceneModel } from '../model/scene';
import { checkBufferTargets, volatileTargetS } from './bufferTarget';
import { checkQoeSegmentsKept } from './objectTask';
import { DEFAULT_BUFFER_TARGET_S } from './playout';
import { reliableCountFromDegree } from './policy';
import { abrRule } from './rules';

export interface PlayerOptions {
  /** URL of the scene's manifest.mpd (absolute, or relative to the page). */
  manifestUrl: string;
  /** Origin base URL whose /config.json describes the WebTransport endpoint; default: the manifest's origin. */
  origin?: string;
  /** WebTransport session URL overriding the origin's configuration (e.g. through a relay). */
  webtransportUrl?: string;
  mode?: PlayerMode;
  /** ABR rule name (`knapsack`, `priority-greedy`, `hybrid`); ignored by `adaptive`. */
  abr?: string;
  /** Objects sent reliably in `qpr` / `qpr-fec` (default: half, rounded up). */
  reliableCount?: number;
  /** The same as a degree of reliability `Q0` … `Q100` (share of objects sent reliably); wins over `reliableCount`. */
  reliability?: string;
  /** Seconds of content requested ahead of the playhead on a steady link (default `DEFAULT_BUFFER_TARGET_S`, 2). */
  bufferTargetS?: number;
  /** Seconds requested ahead after the link starved (default twice `bufferTargetS`; set it equal for a fixed target). */
  volatileBufferTargetS?: number;
  /**
   * Seconds requests may wait without a byte before the WebTransport session is replaced by a new
   * one (default 2, `DEFAULT_STALL_TIMEOUT_MS`; 0 = never; docs/player.md → "Stalled sessions").
   */
  stallTimeoutS?: number;
  /**
   * `qpr-fec` / `q100-fec`: the recovery probability the repair sent up front must reach, planned
   * by the player and asked for as fixed FEC (default 0.7 for `qpr-fec`, `QPR_FEC_TARGET`; for
   * `q100-fec` the origin plans for 99 %). Repair on demand makes up the rest while the deadline allows.
   */
  fecTarget?: number;
  /**
   * Decide late what can be decided late (docs/player.md → "Late upgrades"): every object's lowest
   * rung is requested a buffer target ahead, the higher rungs of the objects in view near playout
   * from a fresh prediction. Default off. Acts on WebTransport in `qr`, `qpr`, `qpr-fec`, `q100-fec`.
   */
  lateUpgrades?: boolean;
  /**
   * Ask for the segment after the buffer target while the one before it still arrives, so that
   * busy periods overlap on a long round trip (docs/player.md → "Requests pipelined across
   * segments"). Default off: one sitting on a loaded machine showed no gain yet. WebTransport only.
   */
  pipelineAhead?: boolean;
  /** Stop after this many seconds of wall time from play() (default: never). */
  durationS?: number;
  /** At the end of a pass go on into the next (default true) or end there (`loop` below). */
  loop?: boolean;
  /** The highest ladder index (0 = lowest) any object is fetched at; default: none (`maxQuality` below). */
  maxQuality?: number | null;
  /**
   * QoE records the player keeps for `qoe()`: the most recent (default `QOE_SEGMENTS_KEPT`,
   * 10 000; 0 keeps none). The log's summary stays exact over the whole run whatever is kept
   * (running totals); a host that wants every record takes them from `onQoeSegment`.
   */
  qoeSegmentsKept?: number;
  /**
   * Called with every QoE record as it is written, on the log's time base (the player's
   * `qoesegment` event carries the same): a sink for a host that keeps the whole of a long run
   * itself, while the player's memory stays bounded by `qoeSegmentsKept`.
   */
  onQoeSegment?: (record: QoeSegment) => void;
  decoder: SegmentDecoder;
  /** Builds the viewport model once the scene is known; without it every object counts as equally visible. */
  viewport?: (scene: SceneModel) => PoseDrivenViewport;
}

export const DEFAULT_MODE: PlayerMode = 'qpr-fec';

/** A quality cap is null (none) or a ladder index: a whole number ≥ 0. */
export function checkedQualityCap(cap: number | null): number | null {
  if (cap !== null && !(Number.isInteger(cap) && cap >= 0)) throw new Error(`maxQuality must be null or a whole number ≥ 0, got ${cap}`);
  return cap;
}

/** Throws an Error naming the first option that is wrong. */
export function checkOptions(options: PlayerOptions): void {
  const mode = options.mode ?? DEFAULT_MODE;
  if (!PLAYER_MODES.includes(mode)) throw new Error(`unknown mode "${mode}" (${PLAYER_MODES.join(', ')})`);
  if (options.abr !== undefined) abrRule(options.abr); // fail early on a typo
  if (options.reliability !== undefined) reliableCountFromDegree(options.reliability, 1);
  const bufferS = options.bufferTargetS ?? DEFAULT_BUFFER_TARGET_S;
  checkBufferTargets(bufferS, volatileTargetS(bufferS, options.volatileBufferTargetS));
  if (options.stallTimeoutS !== undefined && !(options.stallTimeoutS >= 0)) {
    throw new Error(`stall timeout must be 0 (never) or a positive number of seconds, got ${options.stallTimeoutS}`);
  }
  if (options.qoeSegmentsKept !== undefined) checkQoeSegmentsKept(options.qoeSegmentsKept);
}
