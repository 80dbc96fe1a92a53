import { describe, expect, it } from 'vitest';
import type { ViewportModel } from '../model/pose';
import { rankObjects } from './ranking';

const areas: Record<string, number> = { a: 0.1, b: 0.5, c: 0.1, d: 0 };
const model: ViewportModel = { visibleArea: (id) => areas[id] };

describe('rankObjects', () => {
  it('orders by visible area with stable ties', () => {
    expect(rankObjects(['a', 'b', 'c', 'd'], model, 0).map((r) => r.objectId)).toEqual(['b', 'a', 'c', 'd']);
  });
  it('rejects an invalid area from the model', () => {
    expect(() => rankObjects(['x'], { visibleArea: () => NaN }, 0)).toThrow(/invalid visible area/);
  });
});
