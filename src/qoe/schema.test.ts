import { describe, expect, it } from 'vitest';
import { busyGoodput, segmentThroughput, summarizeQoe, validateQoeLog } from './schema';
import { QOE_SCHEMA, type QoeLog, type QoeSegment } from '../model/qoe';

function segment(over: Partial<QoeSegment>): QoeSegment {
  return {
    object: 'o0', index: 0, quality: 0, qualityCount: 5, bitrateBps: 1e6,
    delivery: 'reliable', fec: 'none', transport: 'webtransport', visibleArea: 0.25, rank: 0,
    requestedAtS: 0, deadlineS: 1, objectBytes: 1000, receivedBytes: 1000,
    recovered: true, abandoned: false, decoded: true, onTime: true, completedAtS: 0.5,
    ...over,
  };
}

function log(segments: QoeSegment[], freezes: QoeLog['freezes'] = []): QoeLog {
  return {
    schema: QOE_SCHEMA,
    config: { mode: 'qpr-fec', abr: 'knapsack', bufferTargetS: 1, manifest: '/content/demo/manifest.mpd',
      transport: 'webtransport', predictor: 'default', segmentDurationS: 1 },
    startedAt: '2026-11-23T00:00:00Z', userAgent: 'test',
    playback: { startupS: 0.4, playedS: 10, wallS: 11 },
    freezes, segments,
  };
}

describe('segmentThroughput', () => {
  it('divides the recovered bytes of a segment by its busy span, one sample per segment', () => {
    const samples = segmentThroughput([
      segment({ index: 0, objectBytes: 1000, requestedAtS: 0, completedAtS: 0.5 }),
      segment({ index: 0, object: 'o1', objectBytes: 3000, requestedAtS: 0.1, completedAtS: 1.0 }),
      segment({ index: 1, objectBytes: 500, requestedAtS: 1, completedAtS: 1.25 }),
    ]);
    expect(samples).toEqual([(4000 * 8) / 1.0, (500 * 8) / 0.25]);
  });

  it('ignores objects that never completed instead of counting them as zero', () => {
    expect(segmentThroughput([segment({ recovered: false, completedAtS: undefined })])).toEqual([]);
  });

  it("starts a segment's span at its first request, also when that request was abandoned", () => {
    // Asked at 0, given up, the replacement asked at 0.75 and done at 1: its bytes took 1 s.
    const samples = segmentThroughput([
      segment({ abandoned: true, recovered: false, completedAtS: undefined, requestedAtS: 0 }),
      segment({ requestedAtS: 0.75, completedAtS: 1, objectBytes: 1000 }),
    ]);
    expect(samples).toEqual([8000]);
  });
});

describe('busyGoodput', () => {
  it('divides recovered bytes by the time some object was awaited, not per segment', () => {
    // Two 1-MB segments asked for at once on an 8 Mbit/s link: done at 1 s and 2 s. Per segment
    // that reads 8 and 4 Mbit/s; the link delivered 8 Mbit/s all along.
    const segments = [
      segment({ index: 0, objectBytes: 1e6, requestedAtS: 0, completedAtS: 1 }),
      segment({ index: 1, objectBytes: 1e6, requestedAtS: 0, completedAtS: 2 }),
    ];
    expect(segmentThroughput(segments)).toEqual([8e6, 4e6]);
    expect(busyGoodput(segments)).toBe(8e6);
  });

  it('leaves idle gaps out, counts from an abandoned first request, and ignores skips', () => {
    const segments = [
      segment({ index: 0, objectBytes: 1e6, requestedAtS: 0, completedAtS: 1 }),
      // Idle from 1 to 3.
      segment({ index: 1, abandoned: true, recovered: false, completedAtS: undefined, requestedAtS: 3 }),
      segment({ index: 1, objectBytes: 1e6, requestedAtS: 3.5, completedAtS: 4 }),
      segment({ index: 1, object: 'o1', delivery: 'skip', recovered: false, completedAtS: undefined, requestedAtS: 2 }),
    ];
    expect(busyGoodput(segments)).toBe((2e6 * 8) / 2);
    expect(busyGoodput([segment({ recovered: false, completedAtS: undefined })])).toBeNaN();
  });
});

describe('summarizeQoe', () => {
  it('counts an object a freeze waited for as shown (quality) but not on time', () => {
    const s = summarizeQoe(log([
      segment({ object: 'o0', quality: 4 }),
      segment({ object: 'o1', quality: 2, onTime: false, shownLate: true }),
    ], [{ atS: 1, durationS: 0.5, cause: 'underrun' }]));
    expect(s.onTimeRatio).toBe(0.5);
    expect(s.meanQuality).toBe(3);
    expect(s.bytesWasted).toBe(0);
  });

  it('weighs the on-time ratio by predicted visible area, skipped objects included', () => {
    const s = summarizeQoe(log([
      segment({ visibleArea: 0.6 }),
      segment({ object: 'o1', visibleArea: 0.2, onTime: false }),
      segment({ object: 'o2', visibleArea: 0.2, delivery: 'skip', onTime: false, recovered: false, decoded: false }),
      segment({ object: 'o3', visibleArea: 0, onTime: false }),
    ]));
    expect(s.onTimeRatio).toBeCloseTo(1 / 3);
    expect(s.visibleOnTimeRatio).toBeCloseTo(0.6);
    expect(summarizeQoe(log([segment({ visibleArea: 0 })])).visibleOnTimeRatio).toBeNaN();
  });

  it('derives freezes, on-time ratio, decode success, datagram recovery and FEC overhead', () => {
    const s = summarizeQoe(log([
      segment({ index: 0, quality: 4 }),
      segment({ index: 0, object: 'o1', delivery: 'datagram', fec: 'planned', quality: 2,
        sourceSymbols: 100, symbolsSent: 110, symbolsReceived: 104, repairRequests: 1 }),
      segment({ index: 1, object: 'o1', delivery: 'datagram', fec: 'planned', quality: 2, recovered: false,
        decoded: false, onTime: false, completedAtS: undefined, sourceSymbols: 100, symbolsSent: 120 }),
      segment({ index: 1, quality: 0, decoded: false, onTime: false }),
    ], [{ atS: 2, durationS: 0.5, cause: 'underrun' }, { atS: 5, durationS: 1.5, cause: 'outage' }]));
    expect(s.freezeCount).toBe(2);
    expect(s.freezeTotalS).toBe(2);
    expect(s.onTimeRatio).toBe(0.5);
    expect(s.meanQuality).toBe(3);
    expect(s.decodeSuccess).toBeCloseTo(2 / 3);
    expect(s.datagramRecovery).toBe(0.5);
    // Of the datagram objects delivered (the one recovered), all decoded; the lost one is
    // datagramRecovery's, not a decode failure.
    expect(s.datagramDecoded).toBe(1);
    expect(s.fecOverhead).toBeCloseTo(30 / 200);
    expect(s.repairRequests).toBe(1);
    expect(s.objectSegments).toBe(4);
  });

  it('counts quality switches per object, mean quality per rank and bytes that never reached the screen', () => {
    const s = summarizeQoe(log([
      segment({ index: 0, quality: 0, rank: 0 }),
      segment({ index: 1, quality: 2, rank: 0 }),
      segment({ index: 2, quality: 2, rank: 1 }),
      segment({ index: 0, object: 'o1', quality: 1, rank: 1 }),
      segment({ index: 1, object: 'o1', quality: 0, rank: 1, abandoned: true, onTime: false, receivedBytes: 400 }),
      segment({ index: 1, object: 'o1', quality: 0, rank: 1 }),
      // A datagram object recovered with 200 redundant bytes of repair symbols.
      segment({ index: 2, object: 'o1', quality: 0, rank: 0, delivery: 'datagram', objectBytes: 1000, receivedBytes: 1200 }),
    ]));
    expect(s.qualitySwitches).toBe(2); // o0: 0→2; o1: 1→0
    expect(s.meanQualityByRank).toEqual([(0 + 2 + 0) / 3, (2 + 1 + 0) / 3]);
    expect(s.bytesWasted).toBe(400 + 200);
    expect(s.bytesReceived).toBe(6 * 1000 + 400 + 200);
    expect(s.startupS).toBe(0.4);
  });

  it('says when the player first requested under the volatile buffer target, and never for logs without one', () => {
    const base = log([segment({ index: 0 }), segment({ index: 1 })]);
    expect(summarizeQoe(base).volatileFromS).toBeNaN();
    const grown = log([
      segment({ index: 0, bufferTargetS: 1 }),
      segment({ index: 5, bufferTargetS: 2, requestedAtS: 3.5 }),
      segment({ index: 6, bufferTargetS: 2, requestedAtS: 4.5 }),
    ]);
    expect(summarizeQoe(grown).volatileFromS).toBe(3.5);
  });

  it('says how late the link samples came in the first starved window, and NaN without one', () => {
    const base = log([segment({ index: 0 })]);
    expect(summarizeQoe(base).firstStarvedGapS).toBeNaN();
    expect(summarizeQoe({ ...base, starved: [] }).firstStarvedGapS).toBeNaN();
    const starved = [{ atS: 71, rateBps: 0, spanS: 0.8, bytes: 0, maxGapS: 0.8 }, { atS: 90, rateBps: 1e5, spanS: 0.75, bytes: 9375, maxGapS: 0.05 }];
    expect(summarizeQoe({ ...base, starved }).firstStarvedGapS).toBe(0.8);
  });

  it('carries the replaced-session count, and NaN for logs from before it was kept', () => {
    const before = log([segment({ index: 0 })]);
    expect(summarizeQoe(before).sessionsReplaced).toBeNaN();
    const after = log([segment({ index: 0 })]);
    after.playback.sessionsReplaced = 2;
    expect(summarizeQoe(after).sessionsReplaced).toBe(2);
  });

  it('counts skipped objects apart: not requested, so neither on time nor late', () => {
    const s = summarizeQoe(log([
      segment({ index: 0 }),
      segment({ index: 0, object: 'o1', onTime: false, recovered: false, decoded: false, completedAtS: undefined }),
      segment({ index: 0, object: 'o2', delivery: 'skip', onTime: false, recovered: false, decoded: false, completedAtS: undefined, objectBytes: 0, receivedBytes: 0 }),
      segment({ index: 0, object: 'o3', delivery: 'skip', onTime: false, recovered: false, decoded: false, completedAtS: undefined, objectBytes: 0, receivedBytes: 0 }),
    ]));
    expect(s.onTimeRatio).toBe(0.5);
    expect(s.skippedShare).toBe(0.5);
    expect(s.objectSegments).toBe(2);
  });

  it('reports NaN, not zero, for quantities with nothing to measure', () => {
    const s = summarizeQoe(log([]));
    expect(s.onTimeRatio).toBeNaN();
    expect(s.datagramRecovery).toBeNaN();
    expect(s.fecOverhead).toBeNaN();
  });
});

describe('validateQoeLog', () => {
  it('accepts a well-formed log', () => {
    expect(validateQoeLog(JSON.parse(JSON.stringify(log([segment({})]))))).toBeTruthy();
  });

  it('names the first malformed field', () => {
    const bad = JSON.parse(JSON.stringify(log([segment({})])));
    bad.segments[0].recovered = 'yes';
    expect(() => validateQoeLog(bad)).toThrow(/segments\[0\]\.recovered/);
    expect(() => validateQoeLog({ schema: 'other' })).toThrow(/schema/);
    expect(() => validateQoeLog(null)).toThrow(/not an object/);
  });

  it('takes switch records when present and logs without them (older ones) alike', () => {
    const withSwitches = { ...log([segment({})]), switches: [{ atS: 4.2, from: 'https://a.test/holoquic', to: 'http2', reason: 'session lost' }] };
    expect(validateQoeLog(JSON.parse(JSON.stringify(withSwitches))).switches).toHaveLength(1);
    expect(validateQoeLog(JSON.parse(JSON.stringify(log([segment({})])))).switches).toBeUndefined();
  });

  it('names a malformed switch record', () => {
    const bad = (switches: unknown) => ({ ...JSON.parse(JSON.stringify(log([segment({})]))), switches });
    expect(() => validateQoeLog(bad({}))).toThrow(/switches is not an array/);
    expect(() => validateQoeLog(bad([{ atS: 'soon', from: 'a', to: 'b', reason: 'r' }]))).toThrow(/switches\[0\]\.atS/);
    expect(() => validateQoeLog(bad([{ atS: 1, from: 'a', to: 2, reason: 'r' }]))).toThrow(/switches\[0\]\.to/);
  });

  it('takes starved windows when present, and names a malformed one', () => {
    const window = { atS: 71.06, rateBps: 0.5e6, spanS: 0.75, bytes: 46_875, maxGapS: 0.05 };
    const withStarved = (starved: unknown) => ({ ...JSON.parse(JSON.stringify(log([segment({})]))), starved });
    expect(validateQoeLog(withStarved([window])).starved).toEqual([window]);
    expect(() => validateQoeLog(withStarved({}))).toThrow(/starved is not an array/);
    expect(() => validateQoeLog(withStarved([null]))).toThrow(/starved\[0\] is not an object/);
    expect(() => validateQoeLog(withStarved([{ ...window, maxGapS: null }]))).toThrow(/starved\[0\]\.maxGapS/);
  });
});
