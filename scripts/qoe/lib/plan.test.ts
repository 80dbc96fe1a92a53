import { describe, expect, it } from 'vitest';
import { expandMatrix } from './matrix';
import { describePlan, estimateSeconds, MATRIX_PRESETS, makePlan, type Plan, type PlanSettings, parsePlan, parseShard, planDigest, shardRuns } from './plan';

const SETTINGS: PlanSettings = { durationS: 120, traceScale: 'auto', lossDirection: 'down', page: {}, manifest: '/content/demo/manifest.mpd' };

function plan(overrides: Partial<Parameters<typeof makePlan>[1]> = {}): Plan {
  return makePlan('p', { modes: ['qr', 'adaptive'], lossPct: [0, 5], traces: ['walk'], poses: ['hhi/01'], repetitions: 3, ...overrides }, SETTINGS);
}

describe('matrix dimensions: delay and buffer', () => {
  it('expands delay and buffer like every other dimension, naming them in ids unless usual', () => {
    const runs = expandMatrix({ modes: ['qr'], lossPct: [5], traces: ['t'], poses: ['p'], delaysMs: [10, 50], buffersS: [null, 1], repetitions: 2 });
    expect(runs).toHaveLength(8);
    expect(runs.slice(0, 4).map((r) => r.id)).toEqual(['t_p_loss5_qr_r0', 't_p_loss5_qr_b1s_r0', 't_p_loss5_qr_d50ms_r0', 't_p_loss5_qr_d50ms_b1s_r0']);
    expect(new Set(runs.map((r) => r.id)).size).toBe(8);
    expect(() => expandMatrix({ modes: ['qr'], lossPct: [5], traces: ['t'], poses: ['p'], buffersS: [0], repetitions: 1 })).toThrow(/buffer 0/);
    expect(() => expandMatrix({ modes: ['qr'], lossPct: [5], traces: ['a/t.csv', 'b/t.csv'], poses: ['p'], repetitions: 1 })).toThrow(/share an id/);
  });

  it("defines issue 35's reference matrix: 3 traces (one LTE) × 10/50 ms × 2/1 s × 5 losses × 6 modes × 3 reps", () => {
    const { durationS, ...spec } = MATRIX_PRESETS.reference;
    const reference = makePlan('reference', spec, { ...SETTINGS, durationS });
    expect(reference.runs).toHaveLength(3 * 2 * 2 * 5 * 6 * 3);
    expect(new Set(reference.runs.map((r) => r.trace))).toContain('4g_driving_lumos5g_50015');
    expect(estimateSeconds(1080, 120)).toBe(1080 * 130);
    const text = describePlan(reference, { index: 2, count: 8 }).join('\n');
    expect(text).toContain('1080 runs of 120 s');
    expect(text).toContain('one-way delay ms (2): 10, 50');
    expect(text).toContain('buffer s (2): 2, 1');
    expect(text).toContain('cells: 360');
    expect(text).toContain('estimated time on one machine: 39.0 h');
    expect(text).toContain('shard 2/8: 135 runs, 4.9 h');
    // The smoke preset needs no evaluation data.
    expect(MATRIX_PRESETS.smoke.traces).toEqual(['synthetic']);
    expect(MATRIX_PRESETS.smoke.poses).toEqual(['synthetic']);
  });
});

describe('shards', () => {
  it('parses I/N, 1-based, and refuses anything else', () => {
    expect(parseShard('2/4')).toEqual({ index: 2, count: 4 });
    for (const bad of ['0/4', '5/4', '1/0', '1', 'a/b', '-1/3', '1/2/3']) expect(() => parseShard(bad), bad).toThrow(/--shard/);
  });

  it('deals every run to exactly one shard, round-robin, the same on every machine', () => {
    const runs = plan({ lossPct: [0, 0.5, 1, 2, 5] }).runs; // 30 runs
    for (const count of [1, 2, 4, 7, 30, 31]) {
      const shards = Array.from({ length: count }, (_, i) => shardRuns(runs, { index: i + 1, count }));
      const ids = shards.flat().map((r) => r.id);
      expect(ids.sort(), `N = ${count}`).toEqual(runs.map((r) => r.id).sort());
      const sizes = shards.map((s) => s.length);
      expect(Math.max(...sizes) - Math.min(...sizes), `N = ${count}`).toBeLessThanOrEqual(1);
    }
    // Run k goes to shard k mod N + 1: shard 2 of 4 holds runs 1, 5, 9, …
    expect(shardRuns(runs, { index: 2, count: 4 }).map((r) => r.id)).toEqual(runs.filter((_, k) => k % 4 === 1).map((r) => r.id));
    // The split depends only on the plan: made again, the same shard has the same runs.
    expect(shardRuns(plan({ lossPct: [0, 0.5, 1, 2, 5] }).runs, { index: 3, count: 4 })).toEqual(shardRuns(runs, { index: 3, count: 4 }));
  });
});

describe('plan files', () => {
  it('round-trips through JSON with the same digest, whatever the key order', () => {
    const p = plan();
    const again = parsePlan(JSON.stringify(p), 'p.json');
    expect(again).toEqual(p);
    expect(planDigest(again)).toBe(planDigest(p));
    const reordered = JSON.stringify({ runs: p.runs.map((r) => Object.fromEntries(Object.entries(r).reverse())), settings: p.settings, name: 'other', schema: p.schema });
    expect(planDigest(parsePlan(reordered, 'r.json'))).toBe(planDigest(p));
    // What is measured changes the digest.
    expect(planDigest(plan({ repetitions: 2 }))).not.toBe(planDigest(p));
    expect(planDigest({ ...p, settings: { ...p.settings, durationS: 60 } })).not.toBe(planDigest(p));
  });

  it('refuses a broken plan, naming the file and what is wrong', () => {
    const p = plan();
    const broken = (change: (x: Record<string, unknown>) => void) => {
      const copy = JSON.parse(JSON.stringify(p)) as Record<string, unknown>;
      change(copy);
      return JSON.stringify(copy);
    };
    const runs = (x: Record<string, unknown>) => x.runs as Array<Record<string, unknown>>;
    const cases: Array<[string, RegExp]> = [
      ['{', /plan f.json: not JSON/],
      [broken((x) => { x.schema = 'other/1'; }), /schema must be/],
      [broken((x) => { x.runs = []; }), /non-empty/],
      [broken((x) => { runs(x)[1].id = '../../etc/x'; }), /run 2: id "..\/..\/etc\/x" is not/],
      [broken((x) => { runs(x)[1] = runs(x)[0]; }), /run 2: id .* appears twice/],
      [broken((x) => { runs(x)[0].bufferS = -1; }), /run 1: bufferS/],
      [broken((x) => { runs(x)[0].delayMs = 'slow'; }), /run 1: delayMs/],
      [broken((x) => { (x.settings as PlanSettings).page = { buffer: '1' }; }), /buffer is a dimension/],
      [broken((x) => { (x.settings as PlanSettings).durationS = 0; }), /durationS/],
      [' '.repeat(16 * 1024 * 1024 + 1), /larger than/],
    ];
    for (const [text, why] of cases) expect(() => parsePlan(text, 'f.json'), String(why)).toThrow(why);
  });
});
