import { describe, expect, it } from 'vitest';
import { type Option, solveMultipleChoice } from './mck';

/** Exhaustive search, for checking the DP on small random instances. */
function bruteForce(groups: Option[][], capacity: number): number {
  let best = -Infinity;
  const walk = (g: number, cost: number, value: number) => {
    if (cost > capacity + 1e-9) return;
    if (g === groups.length) { best = Math.max(best, value); return; }
    groups[g].forEach((o) => walk(g + 1, cost + o.cost, value + o.value));
  };
  walk(0, 0, 0);
  return best;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

describe('solveMultipleChoice', () => {
  it('stays within capacity and is near the exhaustive optimum on random instances', () => {
    const random = rng(7);
    for (let trial = 0; trial < 50; trial++) {
      const groups = Array.from({ length: 1 + Math.floor(random() * 4) }, () =>
        Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({ cost: Math.round(random() * 100), value: random() * 10 })));
      const cheapest = groups.reduce((s, g) => s + Math.min(...g.map((o) => o.cost)), 0);
      const capacity = cheapest + random() * 200;
      const picked = solveMultipleChoice(groups, capacity);
      const cost = picked.reduce((s, i, g) => s + groups[g][i].cost, 0);
      const value = picked.reduce((s, i, g) => s + groups[g][i].value, 0);
      expect(cost).toBeLessThanOrEqual(capacity + 1e-9);
      // Rounding each group's extra cost up to whole steps loses less than one step per group, so
      // the DP is at least as good as the true optimum of a capacity smaller by that much.
      const step = (capacity - cheapest) / 512;
      expect(value).toBeGreaterThanOrEqual(bruteForce(groups, capacity - groups.length * step) - 1e-9);
    }
  });

  it('falls back to the cheapest options when even they exceed the capacity', () => {
    expect(solveMultipleChoice([[{ cost: 5, value: 1 }, { cost: 9, value: 2 }], [{ cost: 7, value: 0 }, { cost: 3, value: 0 }]], 1)).toEqual([0, 1]);
  });

  it('rejects malformed input with a message', () => {
    expect(() => solveMultipleChoice([[]], 10)).toThrow(/no options/);
    expect(() => solveMultipleChoice([[{ cost: -1, value: 0 }]], 10)).toThrow(/invalid/);
    expect(() => solveMultipleChoice([[{ cost: 1, value: 0 }]], NaN)).toThrow(/capacity/);
  });
});
