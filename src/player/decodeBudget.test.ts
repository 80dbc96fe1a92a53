import { describe, expect, it } from 'vitest';
import { DecodeCostModel, fitDecodeBudget } from './decodeBudget';
import type { ObjectPlan } from './policy';

const plan = (objectId: string, quality: number): ObjectPlan => ({ objectId, quality, delivery: 'reliable', fec: { kind: 'none' }, urgency: 0 });
const ladder = [10_000, 20_000, 40_000, 60_000, 80_000];
const objects = ['a', 'b', 'c'].map((objectId) => ({ objectId, pointsPerFrame: ladder }));

describe('fitDecodeBudget', () => {
  it('leaves the plan alone before anything was decoded', () => {
    const plans = [plan('a', 4), plan('b', 4), plan('c', 4)];
    expect(fitDecodeBudget(plans, objects, new DecodeCostModel(), 1)).toEqual(plans);
  });

  it('lowers the least visible objects first until the predicted decode time fits', () => {
    const model = new DecodeCostModel();
    model.observe(80_000, 800); // 0.01 ms per point: top quality costs 800 ms per segment
    // Capacity 1600 ms: 800 + 800 + 800 does not fit; c steps down to 0 (100 ms) → 1700, then b to 3 (600) → 1500.
    const fitted = fitDecodeBudget([plan('a', 4), plan('b', 4), plan('c', 4)], objects, model, 1600);
    expect(fitted.map((p) => p.quality)).toEqual([4, 3, 0]);
  });

  it('keeps the plan when it fits and stops at the lowest qualities when nothing fits', () => {
    const model = new DecodeCostModel();
    model.observe(10_000, 100);
    const fits = [plan('a', 2), plan('b', 1), plan('c', 0)];
    expect(fitDecodeBudget(fits, objects, model, 10_000)).toEqual(fits);
    expect(fitDecodeBudget([plan('a', 4), plan('b', 4), plan('c', 4)], objects, model, 1).map((p) => p.quality)).toEqual([0, 0, 0]);
  });
});

describe('DecodeCostModel', () => {
  it('follows the measured cost per point with an exponentially weighted mean', () => {
    const model = new DecodeCostModel();
    expect(model.estimateMs(1000)).toBeNull();
    model.observe(1000, 10);
    expect(model.estimateMs(2000)).toBeCloseTo(20);
    model.observe(1000, 20);
    expect(model.estimateMs(1000)).toBeCloseTo(0.7 * 10 + 0.3 * 20);
    model.observe(0, 5); // nothing to learn from
    expect(model.estimateMs(1000)).toBeCloseTo(13);
  });
});
