import { describe, expect, it } from 'vitest';
import { binomialCdf, planRepair, recoveryProbability } from './fecModel';

describe('FEC model (docs/protocol.md §3.3)', () => {
  it('matches the origin on the shared vectors of holoquic-proto fec.rs', () => {
    // Same (K, loss, burst) → R table as `shared_vectors` in server/crates/holoquic-proto/src/fec.rs.
    expect(planRepair(1000, { rate: 0, meanBurst: 1 })).toBe(0);
    expect(planRepair(100, { rate: 0.01, meanBurst: 1 })).toBe(SHARED[0]);
    expect(planRepair(1000, { rate: 0.05, meanBurst: 1 })).toBe(SHARED[1]);
    expect(planRepair(1000, { rate: 0.05, meanBurst: 2.62 })).toBe(SHARED[2]);
    expect(planRepair(50, { rate: 0.02, meanBurst: 2.5 })).toBe(SHARED[3]);
  });

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

const SHARED = [6, 73, 86, 10];
