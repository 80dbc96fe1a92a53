import { describe, expect, it } from 'vitest';
import { aggregate, type RunRecord, toRow } from './aggregate';
import { renderReport } from './report';
import { checkRoundTrip, roundTripMarkdown } from './roundTrip';
import { qoe, record } from './testSupport';

/**
 * Runs of `mode` at `delayMs`, one per entry of the share of the base log's bytes received (the
 * base: 3 segments of 130 kB in a 3-s run, 1.04 Mbit/s delivered) at visible quality `quality`.
 */
function runs(mode: string, delayMs: number, shares: number[], quality = 3, loss = 5, queueRtts?: number): RunRecord[] {
  return shares.map((share, rep) => {
    const base = record(`${mode}-${delayMs}-${loss}-${rep}${queueRtts ? `-q${queueRtts}` : ''}`, mode, loss, rep, qoe([], quality));
    const log = base.qoe!;
    return {
      ...base, run: { ...base.run, delayMs, ...(queueRtts === undefined ? {} : { queueRtts }) },
      qoe: { ...log, segments: log.segments.map((s) => ({ ...s, receivedBytes: Math.round(s.receivedBytes * share) })) },
    };
  });
}

const check = (records: RunRecord[]) => checkRoundTrip(aggregate(records.map(toRow)));

describe('round-trip check', () => {
  it('compares the delivered rate at a longer delay with the shortest, and holds at 0.8 × or more', () => {
    const [held] = check([...runs('qr', 10, [1, 1, 1]), ...runs('qr', 50, [0.8, 0.8, 0.8], 2.4)]);
    expect(held).toMatchObject({ mode: 'qr', lossPct: 5, referenceDelayMs: 10, delayMs: 50, holds: true });
    expect(held.delivered).toBeCloseTo(0.8, 3);
    expect(held.visibleQuality).toBeCloseTo(0.8, 6);
    const [failed] = check([...runs('qr', 10, [1, 1, 1]), ...runs('qr', 50, [0.7, 0.8, 0.75])]);
    expect(failed.delivered).toBeCloseTo(0.75, 3);
    expect(failed.holds).toBe(false);
  });

  it('takes the shortest delay as the reference for every longer one, per mode and loss', () => {
    const rows = check([
      ...runs('adaptive', 50, [0.9, 0.9]), ...runs('adaptive', 100, [0.5, 0.5]), ...runs('adaptive', 10, [1, 1]),
      ...runs('qr', 10, [1, 1], 3, 0), ...runs('qr', 50, [0.95, 0.95], 3, 0),
    ]);
    expect(rows.map((r) => [r.mode, r.lossPct, r.delayMs, r.referenceDelayMs, r.holds])).toEqual([
      ['qr', 0, 50, 10, true], ['adaptive', 5, 50, 10, true], ['adaptive', 5, 100, 10, false],
    ]);
  });

  it('compares only runs through the same queue: the usual 100 ms apart from a queue in round trips', () => {
    const rows = check([
      ...runs('qr', 10, [1, 1]), ...runs('qr', 50, [0.7, 0.7]),
      ...runs('qr', 10, [1, 1], 3, 5, 5), ...runs('qr', 50, [0.9, 0.9], 3, 5, 5),
    ]);
    expect(rows.map((r) => [r.delayMs, r.referenceDelayMs, r.holds])).toEqual([[50, 10, false], [50, 10, true]]);
    expect(rows[0].delivered).toBeCloseTo(0.7, 3);
    expect(rows[1].delivered).toBeCloseTo(0.9, 3);
  });

  it('has nothing to say about cells measured at one delay only', () => {
    const records = [...runs('qr', 10, [1, 1]), ...runs('adaptive', 10, [1, 1])];
    expect(check(records)).toEqual([]);
    expect(roundTripMarkdown(aggregate(records.map(toRow)))).toBe('');
    expect(renderReport({ title: 'd', provenance: [], records })).not.toContain('Longer round trips');
  });

  it('leaves a comparison undecided without usable runs, and notes failed and single runs', () => {
    const failed = { ...record('qr-50-x', 'qr', 5, 0, null), run: { ...record('qr-50-x', 'qr', 5, 0, null).run, delayMs: 50 } };
    const [undecided] = check([...runs('qr', 10, [1, 1]), failed]);
    expect(undecided.holds).toBeNull();
    expect(undecided.notes).toContain('1 of 1 runs at 50 ms failed');
    const [single] = check([...runs('qr', 10, [1]), ...runs('qr', 50, [0.9, 0.9])]);
    expect(single.notes).toContain('one run at 10 ms');
  });

  it('renders as Markdown and in the HTML report', () => {
    const records = [...runs('qr', 10, [1, 1, 1]), ...runs('qr', 50, [0.5, 0.5, 0.5])];
    const md = roundTripMarkdown(aggregate(records.map(toRow)));
    expect(md).toContain('0 of 1 comparisons hold.');
    expect(md).toContain('| t | default | 5 % | qr | 50 ÷ 10 ms | 0.50 × |');
    const html = renderReport({ title: 'd', provenance: [], records });
    expect(html).toContain('<h2>Longer round trips against the shortest (goal: delivered ≥ 0.8 ×)</h2><p>0 of 1 comparisons hold.</p>');
  });
});
