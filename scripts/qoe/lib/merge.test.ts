import { describe, expect, it } from 'vitest';
import type { RunRecord } from './aggregate';
import { describeMerge, mergeShards, type ShardSource } from './merge';
import { makePlan, type Plan, shardRuns } from './plan';
import { qoe } from './testSupport';

const PLAN: Plan = makePlan('m', { modes: ['qr', 'adaptive'], lossPct: [0, 5], traces: ['t'], poses: ['p'], repetitions: 2 },
  { durationS: 3, traceScale: 'auto', lossDirection: 'down', page: {}, manifest: '/content/demo/manifest.mpd' });

/** The record a shard writes for a planned run: usable, or failed. */
function recordOf(id: string, ok = true, commit = 'abc1234'): RunRecord {
  const entry = PLAN.runs.find((r) => r.id === id)!;
  return {
    run: { id, mode: entry.mode, lossPct: entry.lossPct, ge: '', trace: 't', traceScale: 0.1, pose: 'p', repetition: entry.repetition, durationS: 3, delayMs: 10 },
    commit, qoe: ok ? qoe([], 2) : null, error: ok ? undefined : 'page never reached playing',
  };
}

/** Shard I of N as its directory holds it after running every run dealt to it. */
function shard(index: number, count: number, plan: Plan = PLAN): ShardSource {
  return { label: `s${index}`, plan, records: shardRuns(plan.runs, { index, count }).map((r) => recordOf(r.id)) };
}

describe('mergeShards', () => {
  it('joins the shards of one plan into every run once, in plan order', () => {
    const merged = mergeShards([shard(3, 3), shard(1, 3), shard(2, 3)]);
    expect(merged.records.map((r) => r.run.id)).toEqual(PLAN.runs.map((r) => r.id));
    expect(merged.missing).toEqual([]);
    expect(merged.duplicates).toEqual([]);
    expect(describeMerge(merged, [shard(1, 3)])[0]).toContain(`${PLAN.runs.length} runs of ${PLAN.runs.length} planned`);
  });

  it('lists the planned runs no shard recorded', () => {
    const partial = shard(2, 3);
    partial.records = partial.records.slice(1);
    const merged = mergeShards([shard(1, 3), partial]);
    const expected = [...shardRuns(PLAN.runs, { index: 2, count: 3 }).slice(0, 1), ...shardRuns(PLAN.runs, { index: 3, count: 3 })].map((r) => r.id);
    expect(merged.missing.sort()).toEqual(expected.sort());
    expect(merged.records).toHaveLength(PLAN.runs.length - expected.length);
    expect(describeMerge(merged, [])).toContainEqual(expect.stringMatching(new RegExp(`^MISSING: ${expected.length} planned run`)));
  });

  it('keeps the usable copy of a run that failed in one shard and was run again in another, and says so', () => {
    const id = PLAN.runs[0].id;
    const retry: ShardSource = { label: 'retry', plan: PLAN, records: [recordOf(id)] };
    const first = shard(1, 1);
    first.records = first.records.map((r) => (r.run.id === id ? recordOf(id, false) : r));
    const merged = mergeShards([first, retry]);
    expect(merged.duplicates).toEqual([{ id, in: ['s1', 'retry'], kept: 'retry', keptUsable: true }]);
    expect(merged.records.find((r) => r.run.id === id)?.qoe).not.toBeNull();
    expect(merged.records).toHaveLength(PLAN.runs.length);
    expect(describeMerge(merged, [])).toContain(`DUPLICATE: ${id} recorded in s1 and retry; kept the usable copy, from retry`);
  });

  it('refuses a run recorded usable twice, shards of other plans or commits, and runs outside the plan', () => {
    expect(() => mergeShards([shard(1, 2), shard(1, 2)])).toThrow(/was recorded usable in s1 and s1: remove one copy/);
    const other = makePlan('m', { modes: ['qr'], lossPct: [0], traces: ['t'], poses: ['p'], repetitions: 1 }, PLAN.settings);
    expect(() => mergeShards([shard(1, 2), { label: 'x', plan: other, records: [] }])).toThrow(/different plans: s1 \(plan [0-9a-f]+\), x \(plan/);
    const newer = shard(2, 2);
    newer.records = newer.records.map((r) => ({ ...r, commit: 'def5678' }));
    expect(() => mergeShards([shard(1, 2), newer])).toThrow(/different commits: abc1234 in s1; def5678 in s2/);
    const stray = shard(1, 2);
    stray.records = [...stray.records, { ...recordOf(PLAN.runs[1].id), run: { ...recordOf(PLAN.runs[1].id).run, id: 'elsewhere' } }];
    expect(() => mergeShards([stray])).toThrow(/s1: run elsewhere is not in the plan/);
    expect(() => mergeShards([])).toThrow(/no shard/);
  });

  it('merges directories that kept no plan, without claiming to know what is missing', () => {
    const merged = mergeShards([{ label: 'old', records: [recordOf(PLAN.runs[0].id)] }]);
    expect(merged.records).toHaveLength(1);
    expect(merged.missing).toEqual([]);
    expect(describeMerge(merged, [])).toContain('no shard kept its plan (plan.json): runs missing from the matrix cannot be known');
  });
});
