/**
 * The QoE log a player run produces (`holoquic-qoe/1`): the record types the player writes, the
 * QoE experiment runner collects from the page and the report aggregates. One definition for
 * every side; the prose version is docs/qoe.md → "QoE log". Summaries and validation of a log:
 * src/qoe/schema.ts.
 *
 * Times are seconds since the player's `load()` (performance clock), so a log is self-contained
 * and two runs compare without wall-clock alignment.
 */
import type { PlayerMode } from './modes';

export const QOE_SCHEMA = 'holoquic-qoe/1';

/**
 * Object-segment records a player keeps in memory by default: the most recent ones, so that a
 * long run's log stays bounded (a record is under 1 kB; 10 000 are about 40 minutes of four
 * objects at one segment a second). The older ones are counted in `QoeLog.segmentsDropped`.
 */
export const QOE_SEGMENTS_KEPT = 10_000;

export interface QoeConfig {
  mode: PlayerMode;
  /** ABR rule name, e.g. `priority-greedy`, `hybrid`, `knapsack`. */
  abr: string;
  /** Buffer target on a steady link, in seconds (default 2). */
  bufferTargetS: number;
  /** Buffer target after the link starved (docs/player.md → "Buffer target"); absent in older logs. */
  volatileBufferTargetS?: number;
  /** Seconds without a byte before a stalled WebTransport session is replaced (0 = never; absent in older logs). */
  stallTimeoutS?: number;
  /** Recovery probability of the FEC sent up front, when the player planned it (absent: the origin's 99 %; `qpr-fec` logs before 2026-11-25 too). */
  fecTarget?: number;
  /** Number of objects sent reliably in `qpr` / `qpr-fec`. */
  reliableCount?: number;
  /** Upgrades decided late (docs/player.md → "Late upgrades"); absent: off, and in older logs. */
  lateUpgrades?: boolean;
  manifest: string;
  transport: 'webtransport' | 'http2';
  predictor: string;
  segmentDurationS: number;
}

/**
 * Why playback stopped: `underrun` — bytes of a reliable object had not arrived; `outage` — the
 * session was down or what playback waited for was lost with it; `decode` — every object it waited
 * for had arrived and was still being decoded (the CPU, not the network; absent in older logs).
 */
export type FreezeCause = 'underrun' | 'outage' | 'decode';

export interface QoeFreeze {
  /** When playback stopped. */
  atS: number;
  durationS: number;
  cause: FreezeCause;
}

/** One object of one segment: what was asked for, how it travelled, and what the viewer got. */
export interface QoeSegment {
  object: string;
  /** Segment number on the playout timeline (0 = first). */
  index: number;
  /** Quality index, 0 = lowest, of `qualityCount`. */
  quality: number;
  qualityCount: number;
  /** Declared bitrate of the representation (bit/s). */
  bitrateBps: number;
  /** `skip`: not requested (`adaptive` short of capacity); the previous frame was held. */
  delivery: 'reliable' | 'datagram' | 'skip';
  /** False for a reliable object playback did not wait for (`adaptive`'s objects out of view where repair on demand is slow). Absent: it did. */
  holdsPlayback?: false;
  fec: 'none' | 'planned' | 'fixed';
  transport: 'webtransport' | 'http2';
  /** Predicted visible area share (0…1) and rank (0 = most visible) when the request was made. */
  visibleArea: number;
  rank: number;
  requestedAtS: number;
  /** Playout deadline of the segment. */
  deadlineS: number;
  /** The player's buffer target when the request was made (absent in older logs). */
  bufferTargetS?: number;
  /** The throughput estimate (bit/s) the request was planned with; absent before the first estimate and in older logs. */
  plannedThroughputBps?: number;
  /**
   * The goodput sample (bit/s) its segment gave the throughput estimate — when its transfers
   * ended, or when it was shown if some were still owed (from `31ad5ef`; before, when shown)
   * (src/link/throughput.ts: what the link delivered over the segment's busy time — from 2026-11-29,
   * sixteenth pass; before, the segment's own bytes); absent when the segment gave
   * none (nothing had arrived) and in older logs. With `plannedThroughputBps`, why an estimate moved.
   */
  goodputSampleBps?: number;
  /** The request's RFC 9218 urgency (plan.ts → `requestUrgency`; absent in older logs). */
  urgency?: number;
  firstByteAtS?: number;
  /** When the bytes were complete (reliable) or decoded by FEC (datagram); absent if never. */
  completedAtS?: number;
  objectBytes: number;
  /** Payload bytes received, including redundant FEC symbols. */
  receivedBytes: number;
  /** Datagram delivery only. */
  symbolSize?: number;
  sourceSymbols?: number;
  symbolsSent?: number;
  symbolsReceived?: number;
  /** Of those, the ones carried on the request stream (SYMBOL, docs/protocol.md §3). */
  symbolsOnStream?: number;
  /**
   * The round trip when the request was made (src/transport/pathRtt.ts; absent in older logs): the
   * path RTT used for its deadline and repair timing, the path's minimum, and whether the
   * origin's PATH reports or the player's request → response times gave them.
   */
  rttS?: number;
  minRttS?: number;
  rttSource?: 'origin' | 'responses';
  /** The origin's congestion window (bytes) and delivery-rate estimate (bit/s) then, when it reported them. */
  cwndBytes?: number;
  deliveryRateBps?: number;
  /** Of the symbols up to the last one received (the span that says anything about loss), those missing. */
  symbolsObserved?: number;
  symbolsLost?: number;
  repairRequests?: number;
  /** Object bytes complete and exact. */
  recovered: boolean;
  /** Given up by the abandonment rule (a lower quality was fetched instead), or a late upgrade given up. */
  abandoned: boolean;
  /**
   * Given up without a replacement (an object out of view, docs/player.md → "Abandonment"): not
   * `abandoned`, since nothing else stands for the object-segment — this record is its outcome,
   * not shown on time. Absent: not dropped (and in logs before 2026-11-28, where a dropped
   * request was marked `abandoned` and so had no outcome).
   */
  dropped?: boolean;
  /**
   * A late upgrade (docs/player.md → "Late upgrades"): a higher rung of an object-segment whose
   * lowest rung was requested earlier. It is the object-segment's outcome only when it was shown;
   * otherwise the lower rung's record is. Absent: not one.
   */
  upgrade?: boolean;
  /** The lower rung of an object-segment whose late upgrade was shown instead: not an outcome. */
  superseded?: boolean;
  /**
   * Visible area share (0…1) of the object at the pose when its segment began to play (no
   * prediction): what the viewer saw, for weighting what was shown. Absent in older logs.
   */
  seenArea?: number;
  /** The V-PCC decoder produced frames from it. */
  decoded: boolean;
  /** Why it was not decoded although its bytes arrived (decoder error or decoder busy). */
  decodeError?: string;
  /**
   * Its bytes arrived, but its segment was shown before a decoder was free for it: it could never
   * be seen, so it was not decoded (a late object, not a decode failure).
   */
  decodeLate?: boolean;
  decodeMs?: number;
  /**
   * Its frames were shown at their playout time: recovered and decoded before it, without
   * playback freezing to wait for it.
   */
  onTime: boolean;
  /**
   * Shown, but only after playback froze waiting for it (a reliable object that was late). Logs
   * from before this field counted such objects as `onTime`.
   */
  shownLate?: boolean;
}

/**
 * The path requests travel changed mid-play (docs/player.md → "Failover and fallback"): from one
 * WebTransport endpoint to another, to HTTP/2 because WebTransport kept failing, or back from
 * HTTP/2 when a background probe opened a session.
 */
export interface QoeSwitch {
  /** When the new path took over. */
  atS: number;
  /** A WebTransport session URL, or `http2`. */
  from: string;
  to: string;
  /** Why, in words (e.g. `session lost`, `session stalled, then 2 attempt(s) failed (URL: why; URL: why)`). */
  reason: string;
}

/**
 * A second in which the link looked starved to the buffer target (docs/player.md → "Buffer
 * target"): the first window of each run of them, as the link watch measured it. What made the
 * target grow, and whether to believe it: a `maxGapS` far above the 50-ms sample period says the
 * page's main thread, not the link, was late.
 */
export interface QoeStarved {
  /** When the window ended (the sample that judged it). */
  atS: number;
  /** Bit/s received over the window. */
  rateBps: number;
  /** Seconds the window spans. */
  spanS: number;
  /** Bytes received over the window. */
  bytes: number;
  /** The longest time between two of the window's samples (seconds). */
  maxGapS: number;
}

export interface QoeLog {
  schema: typeof QOE_SCHEMA;
  config: QoeConfig;
  /** ISO 8601 wall-clock time of `load()`. */
  startedAt: string;
  userAgent: string;
  playback: {
    /** Seconds from load() to the first rendered frame. */
    startupS: number;
    /** Seconds of content played (excluding freezes). */
    playedS: number;
    /** Seconds from load() to the end of the log. */
    wallS: number;
    /** WebTransport sessions replaced because they stalled (docs/player.md → "Stalled sessions"; absent in older logs). */
    sessionsReplaced?: number;
  };
  freezes: QoeFreeze[];
  /** The most recent object-segment records, in the order they were written (at most `QOE_SEGMENTS_KEPT` by default). */
  segments: QoeSegment[];
  /** Every switch of path, in order (absent in older logs, and in logs of players without WebTransport). */
  switches?: QoeSwitch[];
  /** Starved windows, the first of each run, at most 100 (absent in older logs). */
  starved?: QoeStarved[];
  /**
   * Older records left out of `segments` to bound the player's memory; summaries of the log cover
   * the records kept (absent: none were left out).
   */
  segmentsDropped?: number;
  /**
   * Running totals over every record of the run, the dropped ones included, written when records
   * were dropped: the summary's ratios and means are computed from them (src/model/qoeTotals.ts).
   */
  totals?: QoeTotals;
}

/**
 * Running totals of a run's QoE records: the sums and counts the summary's ratios and means are
 * made of, kept record by record (src/model/qoeTotals.ts) in memory that does not grow with the run.
 */
export interface QoeTotals {
  /** Records written, abandoned ones included. */
  records: number;
  /** Records that are outcomes (not abandoned), and of those the ones requested (not skipped). */
  outcomes: number;
  requested: number;
  onTime: number;
  /** Shown on time or after a freeze waited for them, with their quality, bitrate and visible area. */
  shown: number;
  shownQualitySum: number;
  shownBitrateSum: number;
  shownAreaSum: number;
  shownAreaQualitySum: number;
  /** Of the shown ones, the sums of `seenArea` and of quality × `seenArea` (absent in older logs' totals). */
  shownSeenAreaSum?: number;
  shownSeenAreaQualitySum?: number;
  /** Visible area of all outcomes, and of those shown on time. */
  outcomeAreaSum: number;
  onTimeAreaSum: number;
  /** Recovered and given to a decoder (not `decodeLate`), and of those decoded. */
  delivered: number;
  deliveredDecoded: number;
  datagram: number;
  datagramRecovered: number;
  datagramDelivered: number;
  datagramDeliveredDecoded: number;
  /** FEC source symbols and symbols sent, over datagram objects that report both. */
  sourceSymbols: number;
  symbolsSent: number;
  repairRequests: number;
  bytesReceived: number;
  bytesWasted: number;
  /** First request made under a buffer target above `baseBufferS` (null: none). */
  volatileFromS: number | null;
  /** Per rank at request time: shown object-segments and the sum of their qualities. */
  rankShown: number[];
  rankQualitySum: number[];
  /** Changes of an object's shown quality between the consecutive segments it was shown in. */
  qualitySwitches: number;
  /** Per object, the last segment shown and its quality (what the next one is compared with). */
  lastShown: Record<string, { index: number; quality: number }>;
}
