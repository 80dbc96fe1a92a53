import { describe, expect, it } from 'vitest';
import { FreezeTracker } from './freezes';

describe('FreezeTracker', () => {
  it('counts each freeze once with its duration, including an outage', () => {
    const t = new FreezeTracker();
    t.begin('underrun', 1000);
    t.begin('underrun', 1200); // same freeze continues
    t.end(1500);
    t.begin('outage', 3000);
    expect(t.frozen).toBe(true);
    t.end(4000);
    const s = t.summary();
    expect(s.count).toBe(2);
    expect(s.totalMs).toBe(1500);
    expect(s.freezes.map((f) => f.cause)).toEqual(['underrun', 'outage']);
  });
  it('reports a freeze in progress up to now and rejects time going backwards', () => {
    const t = new FreezeTracker();
    t.begin('outage', 100);
    expect(t.summary(350).totalMs).toBe(250);
    expect(() => t.end(50)).toThrow(/before it began/);
  });
});

describe('FreezeTracker.setCause', () => {
  it('renames the cause of the freeze in progress, and of nothing else', () => {
    const t = new FreezeTracker();
    t.begin('underrun', 0);
    t.end(100);
    t.begin('underrun', 200);
    t.setCause('outage');
    t.end(500);
    t.setCause('underrun'); // no freeze open: no effect
    expect(t.summary().freezes.map((f) => f.cause)).toEqual(['underrun', 'outage']);
  });
});
