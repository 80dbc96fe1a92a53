/**
 * Reading a QoE log (`holoquic-qoe/1`, record types in src/model/qoe.ts): validation of a log
 * collected from a page, and the summary numbers a person compares between runs.
 */
import { segmentGoodput } from '../link/throughput';
import { QOE_SCHEMA, type QoeLog, type QoeSegment } from '../model/qoe';
import { qoeTotalsOf } from '../model/qoeTotals';

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
  /**
   * The same weighted by the area each object covered at the pose when its segment began to play
   * (`QoeSegment.seenArea`), not the predicted one: a prediction that was wrong shows here. NaN for
   * logs without it.
   */
  meanSeenQuality: number;
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
  /**
   * The longest gap between two link samples in the first starved window (the one that grew the
   * target): near 0.05 s the link starved; far above it the page's main thread was late and the
   * window's low rate may be the page's (NaN if no window starved, or in logs from before).
   */
  firstStarvedGapS: number;
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

/**
 * The summary of a log. Its ratios, means, counts and bytes come from the log's running totals
 * (`QoeLog.totals`, over every record of the run) when the player left older records out, else
 * from its records; the throughput samples and the busy goodput from the records it holds.
 */
export function summarizeQoe(log: QoeLog): QoeSummary {
  const all = log.segments;
  const t = log.totals ?? qoeTotalsOf(all, log.config.bufferTargetS);
  const throughput = segmentThroughput(all);
  const share = (part: number, whole: number) => (whole === 0 ? NaN : part / whole);
  return {
    freezeCount: log.freezes.length,
    freezeTotalS: log.freezes.reduce((a, f) => a + f.durationS, 0),
    meanQuality: share(t.shownQualitySum, t.shown),
    meanVisibleQuality: t.shownAreaSum > 0 ? t.shownAreaQualitySum / t.shownAreaSum : NaN,
    meanSeenQuality: (t.shownSeenAreaSum ?? 0) > 0 ? (t.shownSeenAreaQualitySum ?? 0) / t.shownSeenAreaSum! : NaN,
    meanShownBitrateBps: share(t.shownBitrateSum, t.shown),
    throughputBps: throughput,
    meanThroughputBps: mean(throughput),
    busyGoodputBps: busyGoodput(all),
    onTimeRatio: share(t.onTime, t.requested),
    visibleOnTimeRatio: t.outcomeAreaSum > 0 ? t.onTimeAreaSum / t.outcomeAreaSum : NaN,
    skippedShare: share(t.outcomes - t.requested, t.outcomes),
    decodeSuccess: share(t.deliveredDecoded, t.delivered),
    datagramRecovery: share(t.datagramRecovered, t.datagram),
    datagramDecoded: share(t.datagramDeliveredDecoded, t.datagramDelivered),
    fecOverhead: share(t.symbolsSent - t.sourceSymbols, t.sourceSymbols),
    repairRequests: t.repairRequests,
    objectSegments: t.requested,
    startupS: log.playback.startupS,
    qualitySwitches: t.qualitySwitches,
    meanQualityByRank: t.rankShown.map((n, rank) => share(t.rankQualitySum[rank], n)),
    bytesWasted: t.bytesWasted,
    bytesReceived: t.bytesReceived,
    volatileFromS: t.volatileFromS ?? NaN,
    firstStarvedGapS: log.starved?.[0]?.maxGapS ?? NaN,
    sessionsReplaced: log.playback.sessionsReplaced ?? NaN,
  };
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
    // Optional (older logs have none): the round trip and throughput estimate at request time, the segment's goodput sample.
    for (const key of ['rttS', 'minRttS', 'cwndBytes', 'deliveryRateBps', 'plannedThroughputBps', 'goodputSampleBps', 'urgency'] as const) {
      const v = s[key];
      if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0)) fail(`segments[${i}].${key} is not a non-negative number`);
    }
    if (s.rttSource !== undefined && s.rttSource !== 'origin' && s.rttSource !== 'responses') fail(`segments[${i}].rttSource is ${JSON.stringify(s.rttSource)}`);
  });
  if (log.segmentsDropped !== undefined && !(Number.isSafeInteger(log.segmentsDropped) && log.segmentsDropped >= 0)) {
    fail('segmentsDropped is not a count');
  }
  if (log.totals !== undefined) {
    const t = log.totals as unknown as Record<string, unknown>;
    if (typeof t !== 'object' || t === null || !Array.isArray(t.rankShown) || !Array.isArray(t.rankQualitySum)) fail('totals is malformed');
    for (const key of ['records', 'outcomes', 'requested', 'shown', 'bytesReceived'] as const) {
      if (typeof t[key] !== 'number' || !Number.isFinite(t[key])) fail(`totals.${key} is not a finite number`);
    }
  }
  log.freezes!.forEach((f, i) => {
    if (typeof f.atS !== 'number' || typeof f.durationS !== 'number' || f.durationS < 0) fail(`freezes[${i}] is malformed`);
  });
  // Optional: older logs have none.
  if (log.switches !== undefined) {
    if (!Array.isArray(log.switches)) fail('switches is not an array');
    log.switches!.forEach((s, i) => {
      if (typeof s !== 'object' || s === null || typeof s.atS !== 'number' || !Number.isFinite(s.atS)) fail(`switches[${i}].atS is not a finite number`);
      for (const key of ['from', 'to', 'reason'] as const) {
        if (typeof s[key] !== 'string') fail(`switches[${i}].${key} is not a string`);
      }
    });
  }
  if (log.starved !== undefined) {
    if (!Array.isArray(log.starved)) fail('starved is not an array');
    log.starved!.forEach((w, i) => {
      if (typeof w !== 'object' || w === null) fail(`starved[${i}] is not an object`);
      for (const key of ['atS', 'rateBps', 'spanS', 'bytes', 'maxGapS'] as const) {
        if (typeof w[key] !== 'number' || !Number.isFinite(w[key])) fail(`starved[${i}].${key} is not a finite number`);
      }
    });
  }
  return log as QoeLog;
}
