import { describe, expect, it } from 'vitest';
import { summarizeQoe, validateQoeLog } from '../qoe/schema';
import { playOn, ScriptedLink } from '../testing/scriptedLink';
import { VirtualClock } from './clock';
import { SegmentRecords } from './objectTask';
import { qoeLog } from './report';
import type { QoeSegment } from '../model/qoe';
import { qoeTotalsOf } from '../model/qoeTotals';

describe('the QoE log stays bounded', () => {
  it('keeps the most recent records and counts the ones it dropped', () => {
    const records = new SegmentRecords(3);
    for (let index = 0; index < 10; index++) records.add({ index } as QoeSegment);
    expect(records.list.map((r) => r.index)).toEqual([7, 8, 9]);
    expect(records.dropped).toBe(7);
    // Its memory is the cap, however long the run: the ring holds 3 however many are added.
    for (let index = 10; index < 10_000; index++) records.add({ index } as QoeSegment);
    expect(records.list.map((r) => r.index)).toEqual([9997, 9998, 9999]);
    expect(records.totals.records).toBe(10_000);
  });

  it('keeps none at a cap of 0 (a host streams them out), still counting and totalling every record', () => {
    const records = new SegmentRecords(0);
    for (let index = 0; index < 50; index++) records.add({ index, abandoned: false, delivery: 'reliable', onTime: true, receivedBytes: 10, objectBytes: 10 } as QoeSegment);
    expect(records.list).toEqual([]);
    expect(records.dropped).toBe(50);
    expect(records.totals.records).toBe(50);
    expect(records.totals.onTime).toBe(50);
    expect(() => new SegmentRecords(-1)).toThrow(/whole number ≥ 0/);
    expect(() => new SegmentRecords(1.5)).toThrow(/whole number ≥ 0/);
  });

  it('streams every record out as it is written, the dropped ones included: a host keeping them has the whole run', async () => {
    const clock = new VirtualClock();
    const streamed: QoeSegment[] = [];
    const link = new ScriptedLink(clock, (t) => (t < 6 ? 40e6 : t < 10 ? 3e6 : 20e6));
    const session = await playOn(clock, link, 16, { qoeSegmentsKept: 4, onRecord: (r) => streamed.push(r) });
    const kept = session.segmentRecords();
    expect(kept).toHaveLength(4);
    expect(streamed).toHaveLength(kept.length + session.segmentRecordsDropped());
    // The ring holds the last ones streamed, the very records.
    expect(streamed.slice(-4)).toEqual(kept);
    // The streamed records make the same totals as the player's running ones: nothing was missed.
    expect(qoeTotalsOf(streamed, 2)).toEqual(session.segmentTotals());
  });

  it('a long run keeps at most its cap of records; its log says how many were dropped and is still valid', async () => {
    const clock = new VirtualClock();
    const session = await playOn(clock, new ScriptedLink(clock, () => 40e6), 12, { qoeSegmentsKept: 5 });
    const kept = session.segmentRecords();
    expect(kept).toHaveLength(5);
    const dropped = session.segmentRecordsDropped();
    expect(dropped).toBeGreaterThanOrEqual(15); // 2 objects × ~12 segments, 5 kept
    // The kept ones are the latest.
    expect(Math.min(...kept.map((r) => r.index))).toBeGreaterThanOrEqual(8);
    const log = qoeLog({
      options: { manifestUrl: '/content/test/manifest.mpd' }, mode: 'qr', session, transports: null, loadedAt: 0, endedAt: clock.now(),
      startedAtIso: new Date(0).toISOString(), reliableCount: undefined, predictor: 'none', segmentDurationS: 1,
    });
    expect(log.segments).toHaveLength(5);
    expect(log.segmentsDropped).toBe(dropped);
    expect(validateQoeLog(JSON.parse(JSON.stringify(log)))).toBeTruthy();
    expect(() => validateQoeLog({ ...log, segmentsDropped: -1 })).toThrow(/segmentsDropped is not a count/);
    expect(log.totals?.records).toBe(kept.length + dropped);
    expect(() => validateQoeLog({ ...log, totals: { ...log.totals!, shown: 'many' } })).toThrow(/totals.shown is not a finite number/);
  });

  it('the summary of a bounded log is the summary of the whole run (but for the throughput samples of the records kept)', async () => {
    const run = async (kept?: number) => {
      const clock = new VirtualClock();
      // A link that slows down mid-run: qualities change, some objects are late.
      const session = await playOn(clock, new ScriptedLink(clock, (t) => (t < 6 ? 40e6 : t < 10 ? 3e6 : 20e6)), 16, kept ? { qoeSegmentsKept: kept } : {});
      return qoeLog({
        options: { manifestUrl: '/content/test/manifest.mpd' }, mode: 'qr', session, transports: null, loadedAt: 0, endedAt: clock.now(),
        startedAtIso: new Date(0).toISOString(), reliableCount: undefined, predictor: 'none', segmentDurationS: 1,
      });
    };
    const whole = await run();
    const bounded = await run(6);
    expect(whole.segmentsDropped).toBeUndefined();
    expect(bounded.segments).toHaveLength(6);
    expect(bounded.segmentsDropped).toBe(whole.segments.length - 6);
    const partial = ['throughputBps', 'meanThroughputBps', 'busyGoodputBps'] as const;
    const exact = (log: typeof whole) => Object.fromEntries(Object.entries(summarizeQoe(log)).filter(([k]) => !(partial as readonly string[]).includes(k)));
    const summary = exact(bounded);
    expect(summary).toEqual(exact(whole));
    // It says something: qualities moved, and the whole run counted.
    expect(summary.objectSegments).toBe(whole.segments.filter((s) => !s.abandoned && s.delivery !== 'skip').length);
    expect(summary.qualitySwitches).toBeGreaterThan(0);
    // Without the totals, the kept records alone would tell another story.
    expect(exact({ ...bounded, totals: undefined })).not.toEqual(summary);
  });
});
