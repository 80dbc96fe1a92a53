/**
 * What a playout session is configured with (`PlayoutConfig`) and the buffer target it uses
 * unless told otherwise: the playout loop's inputs, apart from the loop (playout.ts).
 */
import type { ObjectTransport } from '../transport/types';
import type { QoeSegment } from '../model/qoe';
import type { Clock } from './clock';
import type { SegmentDecoder } from '../model/decoder';
import type { ViewportModel } from '../model/pose';
import type { SceneModel } from '../model/scene';
import type { DeliveryPolicy } from './policy';
import type { PlannedObject, PlayoutEvent, ShownObject } from './playoutEvents';

export interface PlayoutConfig {
  scene: SceneModel;
  /** Origin path of the manifest's directory, e.g. `/content/demo/` (segment paths are relative to it). */
  contentBase: string;
  /** WebTransport for the QUIC modes; HTTP/2 for `h2` and as the fallback when WebTransport is absent. */
  transports: { webtransport?: ObjectTransport; http2: ObjectTransport };
  decoder: SegmentDecoder;
  viewport: ViewportModel;
  policy: DeliveryPolicy;
  clock: Clock;
  /** Seconds of content requested ahead of the playhead on a steady link (default `DEFAULT_BUFFER_TARGET_S`). */
  bufferTargetS?: number;
  /** Seconds requested ahead after the link starved (default twice `bufferTargetS`; equal to it for a fixed target). */
  volatileBufferTargetS?: number;
  /** Stop after this many seconds from `run()` (default: never). */
  durationS?: number;
  /**
   * At the end of a pass (pass.ts), go on into the next one (default) or stop there, the last
   * frame shown, until a seek (`setLoop` changes it while playing).
   */
  loop?: boolean;
  /** The highest quality the viewer allows now (read at each segment's planning; null or absent: any). */
  maxQuality?: () => number | null;
  /** A reliable object later than this stalls no longer: it is given up and the segment plays. */
  maxStallS?: number;
  /** Called when segment k starts playing, with the frames to show per object (null = keep the last). */
  onSegment?: (k: number, shown: ReadonlyMap<string, ShownObject | null>) => void;
  onEvent?: (event: PlayoutEvent) => void;
  /** Called when the requests of a segment are planned (one entry per object, most visible first). */
  onPlan?: (plans: ReadonlyArray<PlannedObject>) => void;
  /** QoE records kept in memory, the most recent (default `QOE_SEGMENTS_KEPT`, src/model/qoe.ts). */
  qoeSegmentsKept?: number;
  /**
   * Called with every QoE record as it is written (on the session's time base, seconds since
   * play()), the ones the ring will later drop included: how a host keeps a whole long run.
   */
  onRecord?: (record: QoeSegment) => void;
  /**
   * Request every object's lowest rung a buffer target ahead and decide the upgrades near playout
   * from a fresh prediction (lateUpgrade.ts; default off).
   */
  lateUpgrades?: boolean;
  /** Ask for one segment past the buffer target when the bytes still owed drain within a round trip (pipelineAhead.ts; default off). */
  pipelineAhead?: boolean;
}


/** Seconds of content requested ahead of the playhead unless configured (docs/player.md → Playout). */
export const DEFAULT_BUFFER_TARGET_S = 2;
