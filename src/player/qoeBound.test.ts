import { describe, expect, it } from 'vitest';
import { validateQoeLog } from '../qoe/schema';
import { playOn, ScriptedLink } from '../testing/scriptedLink';
import { VirtualClock } from './clock';
import { SegmentRecords } from './objectTask';
import { qoeLog } from './report';
import type { QoeSegment } from '../model/qoe';

describe('the QoE log stays bounded', () => {
  it('keeps the most recent records and counts the ones it dropped', () => {
    const records = new SegmentRecords(3);
    for (let index = 0; index < 10; index++) records.add({ index } as QoeSegment);
    expect(records.list.map((r) => r.index)).toEqual([7, 8, 9]);
    expect(records.dropped).toBe(7);
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
  });
});
