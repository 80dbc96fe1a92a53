import { describe, expect, it } from 'vitest';
import type { SceneModel } from '../model/scene';
import { DecodeCostModel } from './decodeBudget';
import type { ObjectPlan } from './policy';
import { applyPlanningRules, QUALITY_RULES, qualityCapRule } from './quality';

const plan = (objectId: string, quality: number): ObjectPlan => ({ objectId, quality, delivery: 'reliable', fec: { kind: 'none' }, urgency: 0 });
const scene = { segmentDuration: 1, objects: [] } as unknown as SceneModel;
const state = (maxQuality: number | null) => ({ scene, decodeParallelism: 2, decodeCost: new DecodeCostModel(), maxQuality });

describe('the quality cap rule', () => {
  it('lowers every object above the cap to it and leaves the others', () => {
    const plans = [plan('a', 4), plan('b', 2), plan('c', 0)];
    expect(qualityCapRule.plan!(plans, state(2)).map((p) => p.quality)).toEqual([2, 2, 0]);
    expect(qualityCapRule.plan!(plans, state(0)).map((p) => p.quality)).toEqual([0, 0, 0]);
  });

  it('changes nothing without a cap', () => {
    const plans = [plan('a', 4), plan('b', 3)];
    expect(qualityCapRule.plan!(plans, state(null))).toBe(plans);
  });

  it('is one of the planning-time rules, acting before the decode budget', () => {
    const names = QUALITY_RULES.filter((r) => r.plan).map((r) => r.name);
    expect(names.indexOf('quality-cap')).toBeGreaterThanOrEqual(0);
    expect(names.indexOf('quality-cap')).toBeLessThan(names.indexOf('decode-budget'));
    expect(applyPlanningRules([plan('a', 4), plan('b', 1)], state(1)).map((p) => p.quality)).toEqual([1, 1]);
  });
});
