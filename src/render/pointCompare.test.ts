import { describe, expect, it } from 'vitest';
import { comparePointSets } from './pointCompare';

const set = (points: number[][]) => ({
  count: points.length,
  positions: points.flatMap((p) => p.slice(0, 3)),
  colors: points.flatMap((p) => p.slice(3)),
});

describe('comparePointSets', () => {
  it('equal sets in another order are equal', () => {
    const a = set([[1, 2, 3, 10, 20, 30], [1000, 0, 5, 0, 0, 0], [1, 2, 3, 11, 20, 30]]);
    const b = set([[1, 2, 3, 11, 20, 30], [1, 2, 3, 10, 20, 30], [1000, 0, 5, 0, 0, 0]]);
    expect(comparePointSets(a, b)).toEqual({ countA: 3, countB: 3, positionMismatches: 0, maxColorDiff: 0, exactColorShare: 1 });
  });

  it('counts missing positions and the largest colour difference', () => {
    const a = set([[1, 2, 3, 10, 20, 30], [4, 5, 6, 0, 0, 0], [7, 8, 9, 0, 0, 0]]);
    const b = set([[1, 2, 3, 10, 22, 30], [4, 5, 6, 0, 0, 0]]);
    const d = comparePointSets(a, b);
    expect(d.positionMismatches).toBe(1);
    expect(d.maxColorDiff).toBe(2);
    expect(d.exactColorShare).toBe(0.5);
  });
});
