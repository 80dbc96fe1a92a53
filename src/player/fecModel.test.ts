import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { binomialCdf, planRepair, recoveryProbability } from './fecModel';

/** (k, loss, burst) → r: the origin's plans (docs/vectors/fec-planning.json), which the player's model must reproduce. */
const { plans } = JSON.parse(readFileSync(new URL('../../docs/vectors/fec-planning.json', import.meta.url), 'utf8')) as {
  plans: { k: number; loss: number; burst: number; r: number; note?: string }[];
};

describe('FEC model (docs/protocol.md §3.3)', () => {
  for (const { k, loss, burst, r, note } of plans) {
    it(`plans the origin's r = ${r} for k = ${k} at loss ${loss} in bursts of ${burst}${note ? ` (${note})` : ''}`, () => {
      expect(planRepair(k, { rate: loss, meanBurst: burst })).toBe(r);
    });
  }

  it('recovery probability grows with repair and falls with burstiness', () => {
    const loss = { rate: 0.05, meanBurst: 1 };
    expect(recoveryProbability(500, 40, loss)).toBeGreaterThan(recoveryProbability(500, 20, loss));
    expect(recoveryProbability(500, 40, { rate: 0.05, meanBurst: 3 })).toBeLessThan(recoveryProbability(500, 40, loss));
    expect(recoveryProbability(500, planRepair(500, loss), loss)).toBeGreaterThanOrEqual(0.99);
  });

  it('binomial cdf is exact on small cases', () => {
    expect(binomialCdf(2, 0.5, 0)).toBeCloseTo(0.25);
    expect(binomialCdf(2, 0.5, 1)).toBeCloseTo(0.75);
    expect(binomialCdf(3, 0.1, 3)).toBe(1);
  });
});
