import { describe, expect, it } from 'vitest';
import { utilityKnapsack, type KnapsackInput } from './knapsack';

const ladder = [1e6, 2e6, 4e6, 8e6, 16e6];
const object = (objectId: string, visibleArea: number, fecOverhead = 0): KnapsackInput => ({
  objectId,
  visibleArea,
  bitrates: ladder,
  fecOverhead,
});

function spend(objects: KnapsackInput[], allocation: Map<string, number>): number {
  return objects.reduce((s, o) => s + o.bitrates[allocation.get(o.objectId)!] * (1 + (o.fecOverhead ?? 0)), 0);
}

describe('utilityKnapsack', () => {
  it('gives everyone the lowest quality when the budget does not cover more', () => {
    const objects = [object('a', 1), object('b', 1)];
    expect([...utilityKnapsack(objects, 1e6)]).toEqual([['a', 0], ['b', 0]]);
  });

  it('never spends more than the budget above the floor', () => {
    const objects = [object('a', 0.5), object('b', 0.3), object('c', 0.15), object('d', 0.05)];
    for (const budget of [5e6, 9e6, 17e6, 30e6, 70e6]) {
      expect(spend(objects, utilityKnapsack(objects, budget))).toBeLessThanOrEqual(budget);
    }
  });

  it('spreads quality by visibility instead of maxing one object out', () => {
    // 12 Mbit/s: greedy would give 'a' 8 Mbit/s; log utility prefers 4 + 4 + 2 + 1 here
    const objects = [object('a', 0.3), object('b', 0.3), object('c', 0.25), object('d', 0.15)];
    const allocation = utilityKnapsack(objects, 12e6);
    expect(allocation.get('a')).toBeGreaterThanOrEqual(allocation.get('d')!);
    expect(allocation.get('a')).toBeLessThan(3);
    expect(spend(objects, allocation)).toBeLessThanOrEqual(12e6);
  });

  it('budgets FEC overhead: a datagram object with repair costs more', () => {
    const plain = utilityKnapsack([object('a', 1), object('b', 1)], 10e6);
    const withFec = utilityKnapsack([object('a', 1), object('b', 1, 0.5)], 10e6);
    expect(withFec.get('b')!).toBeLessThanOrEqual(plain.get('b')!);
    expect(spend([object('a', 1), object('b', 1, 0.5)], withFec)).toBeLessThanOrEqual(10e6);
  });

  it('ignores invisible objects beyond their floor', () => {
    const allocation = utilityKnapsack([object('seen', 1), object('hidden', 0)], 40e6);
    expect(allocation.get('hidden')).toBe(0);
    expect(allocation.get('seen')).toBe(4);
  });

  it('rejects a negative budget', () => {
    expect(() => utilityKnapsack([object('a', 1)], -1)).toThrow(/budget/);
  });
});
