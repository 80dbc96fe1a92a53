import { describe, expect, it } from 'vitest';
import { autoTraceScale, expandMatrix, geForLoss, parseBandwidthTrace } from './matrix';

describe('geForLoss', () => {
  it('reproduces the parameter table of docs/qoe.md', () => {
    expect(geForLoss(0.5)).toBe('0.0576,10,70,0.1');
    expect(geForLoss(1)).toBe('0.1304,10,70,0.1');
    expect(geForLoss(2)).toBe('0.2794,10,70,0.1');
    expect(geForLoss(5)).toBe('0.7538,10,70,0.1');
    expect(geForLoss(0)).toBe('');
  });

  it('refuses levels the model cannot produce', () => {
    expect(() => geForLoss(80)).toThrow(/outside/);
    expect(() => geForLoss(0.05)).toThrow(/background/);
  });
});

describe('expandMatrix', () => {
  it('covers every combination with unique ids, repetitions outermost', () => {
    const runs = expandMatrix({ modes: ['qr', 'qpr-fec'], lossPct: [0, 5], traces: ['/x/5g_walking.csv'], poses: ['hhi/01.csv'], repetitions: 2 });
    expect(runs).toHaveLength(8);
    expect(new Set(runs.map((r) => r.id)).size).toBe(8);
    expect(runs.slice(0, 4).every((r) => r.repetition === 0)).toBe(true);
    expect(runs[0].id).toBe('5g_walking_01_loss0_qr_r0');
  });

  it('rejects an empty dimension', () => {
    expect(() => expandMatrix({ modes: [], lossPct: [0], traces: ['t'], poses: ['p'], repetitions: 1 })).toThrow();
  });
});

describe('traces and scaling', () => {
  it('parses t_seconds,mbps and rejects garbage with the line number', () => {
    expect(parseBandwidthTrace('t_seconds,mbps\n0,10\n1,20.5\n')).toEqual([{ t: 0, mbps: 10 }, { t: 1, mbps: 20.5 }]);
    expect(() => parseBandwidthTrace('t_seconds,mbps\n0,ten\n')).toThrow(/line 2/);
    expect(() => parseBandwidthTrace('0,10\n1,\n')).toThrow(/line 2/); // not 0 Mbit/s
    expect(() => parseBandwidthTrace('0,10,3\n')).toThrow(/line 1/);
    expect(() => parseBandwidthTrace('0,10\n0,20\n')).toThrow(/line 2: time 0 s does not increase/);
  });

  it('auto scale maps the trace median onto the sum of second-highest rungs', () => {
    const ladders = [[1e6, 2e6, 4e6, 8e6, 16e6], [1e6, 2e6, 4e6, 8e6, 16e6]];
    expect(autoTraceScale([100, 200, 300], ladders)).toBeCloseTo(16 / 200);
  });
});
