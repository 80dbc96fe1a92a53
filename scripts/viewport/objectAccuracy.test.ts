import { describe, expect, it } from 'vitest';
import { SetAccuracy, topVisible } from './objectAccuracy';

describe('object-level accuracy', () => {
  it('top-k takes the largest visible fractions only', () => {
    expect(topVisible([0.1, 0, 0.3, 0.2], 2)).toEqual([2, 3]);
    expect(topVisible([0.1, 0, 0.3, 0.2], 4)).toEqual([2, 3, 0]);
    expect(topVisible([0, 0], 1)).toEqual([]);
  });

  it('pools precision and recall over samples', () => {
    const acc = new SetAccuracy();
    acc.add([0, 1], [0, 2]); // one of two right
    acc.add([3], [3, 1]); // the one predicted is right, one missed
    expect(acc.precision).toBeCloseTo(2 / 3, 12);
    expect(acc.recall).toBeCloseTo(2 / 4, 12);
    expect(new SetAccuracy().precision).toBe(1);
  });
});
