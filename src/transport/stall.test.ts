import { describe, expect, it } from 'vitest';
import { StallWatch } from './stall';

describe('StallWatch', () => {
  it('is stalled only while requests wait and no byte has come for the timeout', () => {
    const w = new StallWatch(2000);
    expect(w.stalled(10_000)).toBe(false); // nothing waiting: an idle session is not a stalled one
    w.begin(10_000);
    expect(w.stalled(11_999)).toBe(false);
    expect(w.stalled(12_000)).toBe(true);
    w.progress(12_100);
    expect(w.stalled(14_000)).toBe(false);
    expect(w.stalled(14_100)).toBe(true);
    w.end();
    expect(w.stalled(20_000)).toBe(false);
  });

  it('requests made during a stall do not restart its clock; a request after idle does', () => {
    const w = new StallWatch(2000);
    w.begin(0);
    w.begin(1500); // the player asks for the next segment while the first still waits
    expect(w.stalled(2000)).toBe(true);
    w.end();
    w.end();
    w.begin(5000); // first request after an idle spell: its own clock
    expect(w.stalled(6000)).toBe(false);
    expect(w.stalled(7000)).toBe(true);
  });

  it('rejects a timeout that is not positive', () => {
    expect(() => new StallWatch(0)).toThrow(/positive/);
  });
});
