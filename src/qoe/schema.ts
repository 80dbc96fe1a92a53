/**
 * The QoE log a player run produces (`holoquic-qoe/1`): what the player writes, what the QoE
 * experiment runner collects from the page and what the report aggregates. One definition for
 * both sides; the prose version is docs/qoe.md → "QoE log".
 *
 * Times are seconds since the player's `load()` (performance clock), so a log is self-contained
 * and two runs compare without wall-clock alignment.
 */
import { segmentGoodput } from '../player/throughput';

export const QOE_SCHEMA = 'holoquic-qoe/1';

export type QoeDeliveryMode = 'h2' | 'qr' | 'qpr' | 'qpr-fec' | 'q100-fec' | 'adaptive';

export interface QoeConfig {
  mode: QoeDeliveryMode;
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
  /** Of the symbols up to the last one received (the span that says anything about loss), those missing. */
  symbolsObserved?: number;
  symbolsLost?: number;
  repairRequests?: number;
  /** Object bytes complete and exact. */
  recovered: boolean;
  /** Given up by the abandonment rule (a lower quality was fetched instead). */
  abandoned: boolean;
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
  segments: QoeSegment[];
}

/** Numbers a person compares between runs; derived from a log by `summarizeQoe`. */
export interface QoeSummary {
  freezeCount: number;
  freezeTotalS: number;
  /**
   * Mean quality index over all object-segments that were shown, on time or after a freeze
   * waited for them (NaN if none).
   */
  meanQuality: number;
  /**
   * Mean quality index shown, weighted by predicted visible area (NaN when nothing was predicted
   * visible): what the viewer saw. `meanQuality` also counts objects out of view, which a
   * viewport-aware player rightly keeps at the lowest quality.
   */
  meanVisibleQuality: number;
  /** Mean declared bitrate of what was shown (bit/s). */
  meanShownBitrateBps: number;
  /** Per-segment application goodput samples (bit/s): recovered object bytes of the segment over
   *  the time from its first request (abandoned ones included) to its last completion. */
  throughputBps: number[];
  meanThroughputBps: number;
  /**
   * Recovered object bytes over the time the player was waiting for some object (the union of
   * the request → completion intervals, an object's interval starting at its first request even
   * when that one was abandoned); NaN if nothing was recovered. Per-segment samples split a busy
   * link between the segments in flight (four 1-s segments fetched back to back on 4 Mbit/s
   * sample 4, 2, 1.3 and 1); this is the rate the transport delivered what was wanted.
   */
  busyGoodputBps: number;
  /** Object-segments shown at their playout time / object-segments requested (abandoned requests
   *  are not outcomes: their replacement is; skipped ones were never asked for). */
  onTimeRatio: number;
  /**
   * Predicted visible area of the object-segments shown on time / of all of them, skipped ones
   * included (NaN when nothing was predicted visible): how much of what the viewer looked at
   * moved on time. A mode that never stalls (`q100-fec`) still holds late objects' last frames;
   * this is where that shows.
   */
  visibleOnTimeRatio: number;
  /** Object-segments the player chose not to fetch (`adaptive` short of capacity) / all. */
  skippedShare: number;
  /** Decoded / recovered object-segments a decoder was given (late ones, never decoded, left out). */
  decodeSuccess: number;
  /** Datagram object-segments recovered / datagram object-segments (NaN if none). */
  datagramRecovery: number;
  /**
   * Of the datagram object-segments delivered (recovered, and given to the decoder: not
   * `decodeLate`), those decoded (NaN if none): the "datagram-delivered objects decoded" goal.
   * Delivery itself is `datagramRecovery`.
   */
  datagramDecoded: number;
  /** Repair symbols sent / source symbols, over datagram objects (NaN if none). */
  fecOverhead: number;
  repairRequests: number;
  objectSegments: number;
  /** Seconds from load() to the first frame. */
  startupS: number;
  /** Changes of the shown quality of an object between consecutive segments it was shown in. */
  qualitySwitches: number;
  /** Mean quality index shown, per priority rank at request time (index = rank). */
  meanQualityByRank: number[];
  /** Bytes received that never reached the screen: abandoned or late or unrecovered objects, and
   *  FEC symbols beyond the object size of recovered ones. */
  bytesWasted: number;
  bytesReceived: number;
  /** When the first request under a buffer target above the base was made: the link was judged
   *  volatile (NaN if never, or in logs from before the buffer target adapted). */
  volatileFromS: number;
  /** Stalled sessions replaced (`playback.sessionsReplaced`; NaN in logs from before). */
  sessionsReplaced: number;
}

function mean(values: number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * Per segment index: recovered bytes over [first request, last completion]. The first request
 * may be one that was abandoned (its replacement's bytes then took that long). Segments with no
 * completed object give no sample (a gap, not a zero, so a stall is counted once, by freezes).
 */
export function segmentThroughput(segments: readonly QoeSegment[]): number[] {
  const byIndex = new Map<number, { bytes: number; start: number; end: number }>();
  for (const s of segments) {
    if (s.delivery === 'skip') continue;
    const entry = byIndex.get(s.index) ?? { bytes: 0, start: Infinity, end: -Infinity };
    entry.start = Math.min(entry.start, s.requestedAtS);
    if (s.recovered && s.completedAtS !== undefined) {
      entry.bytes += s.objectBytes;
      entry.end = Math.max(entry.end, s.completedAtS);
    }
    byIndex.set(s.index, entry);
  }
  return [...byIndex.entries()]
    .sort((a, b) => a[0] - b[0])
    .filter(([, e]) => e.bytes > 0 && e.end > e.start)
    .map(([, e]) => (e.bytes * 8) / (e.end - e.start));
}

/** See `QoeSummary.busyGoodputBps`. */
export function busyGoodput(segments: readonly QoeSegment[]): number {
  const firstRequest = new Map<string, number>();
  const key = (s: QoeSegment) => `${s.object}\u0000${s.index}`;
  for (const s of segments) {
    if (s.delivery !== 'skip') firstRequest.set(key(s), Math.min(firstRequest.get(key(s)) ?? Infinity, s.requestedAtS));
  }
  // The player's own busy-time goodput (the union of intervals), over the whole run.
  const deliveries = segments
    .filter((s) => s.recovered && s.completedAtS !== undefined && s.delivery !== 'skip')
    .map((s) => ({ receivedBytes: s.objectBytes, startMs: firstRequest.get(key(s))! * 1000, endMs: s.completedAtS! * 1000 }));
  return segmentGoodput(deliveries) ?? NaN;
}

/** Share of `items` for which `test` holds (NaN for none). */
function ratio<T>(items: readonly T[], test: (item: T) => boolean): number {
  return items.length === 0 ? NaN : items.filter(test).length / items.length;
}

export function summarizeQoe(log: QoeLog): QoeSummary {
  // An abandoned request was replaced by another record for the same object and segment: it
  // counts for bytes and throughput, not as an outcome.
  const all = log.segments;
  const outcomes = all.filter((s) => !s.abandoned);
  const segs = outcomes.filter((s) => s.delivery !== 'skip');
  const onTime = segs.filter((s) => s.onTime);
  const shown = segs.filter((s) => s.onTime || s.shownLate);
  const recovered = segs.filter((s) => s.recovered && !s.decodeLate);
  const datagram = segs.filter((s) => s.delivery === 'datagram');
  const withSymbols = datagram.filter((s) => (s.sourceSymbols ?? 0) > 0 && s.symbolsSent !== undefined);
  const source = withSymbols.reduce((a, s) => a + (s.sourceSymbols ?? 0), 0);
  const sent = withSymbols.reduce((a, s) => a + (s.symbolsSent ?? 0), 0);
  const throughput = segmentThroughput(all);
  return {
    freezeCount: log.freezes.length,
    freezeTotalS: log.freezes.reduce((a, f) => a + f.durationS, 0),
    meanQuality: mean(shown.map((s) => s.quality)),
    meanVisibleQuality: weightedMean(shown.map((s) => [s.quality, s.visibleArea])),
    meanShownBitrateBps: mean(shown.map((s) => s.bitrateBps)),
    throughputBps: throughput,
    meanThroughputBps: mean(throughput),
    busyGoodputBps: busyGoodput(all),
    onTimeRatio: segs.length === 0 ? NaN : onTime.length / segs.length,
    visibleOnTimeRatio: areaShare(outcomes, (s) => s.onTime),
    skippedShare: outcomes.length === 0 ? NaN : (outcomes.length - segs.length) / outcomes.length,
    decodeSuccess: recovered.length === 0 ? NaN : recovered.filter((s) => s.decoded).length / recovered.length,
    datagramRecovery: datagram.length === 0 ? NaN : datagram.filter((s) => s.recovered).length / datagram.length,
    datagramDecoded: ratio(datagram.filter((s) => s.recovered && !s.decodeLate), (s) => s.decoded),
    fecOverhead: source === 0 ? NaN : (sent - source) / source,
    repairRequests: all.reduce((a, s) => a + (s.repairRequests ?? 0), 0),
    objectSegments: segs.length,
    startupS: log.playback.startupS,
    qualitySwitches: qualitySwitches(shown),
    meanQualityByRank: meanByRank(shown),
    bytesWasted: all.reduce((a, s) => a + (s.onTime || s.shownLate ? Math.max(0, s.receivedBytes - s.objectBytes) : s.receivedBytes), 0),
    bytesReceived: all.reduce((a, s) => a + s.receivedBytes, 0),
    volatileFromS: firstVolatileRequest(all, log.config.bufferTargetS),
    sessionsReplaced: log.playback.sessionsReplaced ?? NaN,
  };
}

function firstVolatileRequest(segments: readonly QoeSegment[], baseS: number): number {
  const times = segments.filter((s) => (s.bufferTargetS ?? 0) > baseS).map((s) => s.requestedAtS);
  return times.length === 0 ? NaN : Math.min(...times);
}

/** Visible area of the segments for which `test` holds / visible area of all (NaN for none). */
function areaShare(segments: readonly QoeSegment[], test: (s: QoeSegment) => boolean): number {
  const area = segments.reduce((a, s) => a + s.visibleArea, 0);
  return area > 0 ? segments.filter(test).reduce((a, s) => a + s.visibleArea, 0) / area : NaN;
}

function weightedMean(pairs: Array<[number, number]>): number {
  const weight = pairs.reduce((a, [, w]) => a + w, 0);
  return weight > 0 ? pairs.reduce((a, [v, w]) => a + v * w, 0) / weight : NaN;
}

/** Quality changes per object along the segments it was shown in, summed over objects. */
function qualitySwitches(shown: readonly QoeSegment[]): number {
  const byObject = new Map<string, QoeSegment[]>();
  for (const s of shown) byObject.set(s.object, [...(byObject.get(s.object) ?? []), s]);
  let switches = 0;
  for (const list of byObject.values()) {
    list.sort((a, b) => a.index - b.index);
    for (let i = 1; i < list.length; i++) if (list[i].quality !== list[i - 1].quality) switches++;
  }
  return switches;
}

function meanByRank(shown: readonly QoeSegment[]): number[] {
  const ranks = shown.length === 0 ? 0 : Math.max(...shown.map((s) => s.rank)) + 1;
  return Array.from({ length: ranks }, (_, rank) => mean(shown.filter((s) => s.rank === rank).map((s) => s.quality)));
}

/** Checks the shape of a log that came from a page or a file; throws naming the first problem. */
export function validateQoeLog(value: unknown): QoeLog {
  const fail = (what: string): never => {
    throw new Error(`not a ${QOE_SCHEMA} log: ${what}`);
  };
  if (typeof value !== 'object' || value === null) fail('not an object');
  const log = value as Partial<QoeLog>;
  if (log.schema !== QOE_SCHEMA) fail(`schema is ${JSON.stringify(log.schema)}`);
  if (typeof log.config !== 'object' || log.config === null) fail('config missing');
  if (!Array.isArray(log.freezes)) fail('freezes is not an array');
  if (!Array.isArray(log.segments)) fail('segments is not an array');
  if (typeof log.playback !== 'object' || log.playback === null) fail('playback missing');
  log.segments!.forEach((s, i) => {
    for (const key of ['index', 'quality', 'requestedAtS', 'deadlineS', 'objectBytes', 'receivedBytes'] as const) {
      if (typeof s[key] !== 'number' || !Number.isFinite(s[key])) fail(`segments[${i}].${key} is not a finite number`);
    }
    if (typeof s.object !== 'string') fail(`segments[${i}].object is not a string`);
    for (const key of ['recovered', 'decoded', 'onTime', 'abandoned'] as const) {
      if (typeof s[key] !== 'boolean') fail(`segments[${i}].${key} is not a boolean`);
    }
  });
  log.freezes!.forEach((f, i) => {
    if (typeof f.atS !== 'number' || typeof f.durationS !== 'number' || f.durationS < 0) fail(`freezes[${i}] is malformed`);
  });
  return log as QoeLog;
}
