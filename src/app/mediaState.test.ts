import { describe, expect, it } from 'vitest';
import { loopAttribute, optionsFromAttributes, reliabilityAttribute } from './attributes';
import { bufferedRanges, type MediaSnapshot, readyStateOf } from './mediaState';
import { READY_STATE } from './mediaTypes';
import type { HoloquicPlayerElement } from './component';

const base: MediaSnapshot = {
  hasScene: true, hasFrame: true, frozen: false, positionS: 3.5, durationS: 10, segmentS: 1, aheadS: 2.5, bufferTargetS: 2, loop: true,
};
const ranges = (s: MediaSnapshot) => {
  const r = bufferedRanges(s);
  return Array.from({ length: r.length }, (_, i) => [r.start(i), r.end(i)]);
};

describe('buffered', () => {
  it('runs from the start of the segment shown to as far as decoding reaches', () => {
    expect(ranges(base)).toEqual([[3, 6]]);
  });

  it('is empty before a frame is shown and while seeking', () => {
    expect(ranges({ ...base, hasFrame: false })).toEqual([]);
    expect(() => bufferedRanges({ ...base, hasFrame: false }).start(0)).toThrow(/no time range 0/);
  });

  it('wraps to the next pass when looping, and stops at the end when not', () => {
    expect(ranges({ ...base, positionS: 9.25, aheadS: 2 })).toEqual([[0, 1.25], [9, 10]]);
    expect(ranges({ ...base, positionS: 9.25, aheadS: 2, loop: false })).toEqual([[9, 10]]);
    expect(ranges({ ...base, positionS: 10, aheadS: 0, loop: false })).toEqual([[9, 10]]);
  });
});

describe('readyState', () => {
  it('follows the player: nothing, metadata, current frame (frozen), future, enough', () => {
    expect(readyStateOf({ ...base, hasScene: false })).toBe(READY_STATE.HAVE_NOTHING);
    expect(readyStateOf({ ...base, hasFrame: false })).toBe(READY_STATE.HAVE_METADATA);
    expect(readyStateOf({ ...base, frozen: true })).toBe(READY_STATE.HAVE_CURRENT_DATA);
    expect(readyStateOf({ ...base, aheadS: 0.5 })).toBe(READY_STATE.HAVE_FUTURE_DATA);
    expect(readyStateOf(base)).toBe(READY_STATE.HAVE_ENOUGH_DATA);
    // Near the end of a pass that does not loop, what is left is enough.
    expect(readyStateOf({ ...base, loop: false, positionS: 9.6, aheadS: 0.4 })).toBe(READY_STATE.HAVE_ENOUGH_DATA);
  });
});

describe('attributes', () => {
  const read = (attributes: Record<string, string>) => optionsFromAttributes((name) => attributes[name] ?? null);

  it('reads reliability as a degree and loop as a boolean attribute (present: on, whatever its value)', () => {
    expect(read({ reliability: 'q40' }).reliability).toBe('Q40');
    expect(() => reliabilityAttribute('Q101')).toThrow(/reliability="Q101" is not Q0 … Q100/);
    expect(loopAttribute(null)).toBe(false);
    expect(loopAttribute('')).toBe(true);
    expect(loopAttribute('loop')).toBe(true);
    // As for <video loop="false">: present is on.
    expect(loopAttribute('false')).toBe(true);
    expect(read({}).loop).toBe(false);
    expect(read({ loop: '' }).loop).toBe(true);
  });

  it('reads qoe-kept as the number of QoE records the player keeps, refusing what is not a whole number', () => {
    expect(read({ 'qoe-kept': '600' }).qoeSegmentsKept).toBe(600);
    expect(read({ 'qoe-kept': '0' }).qoeSegmentsKept).toBe(0);
    expect(read({}).qoeSegmentsKept).toBeUndefined();
    expect(() => read({ 'qoe-kept': '2.5' })).toThrow(/qoe-kept="2.5" is not a whole number/);
    expect(() => read({ 'qoe-kept': '-1' })).toThrow(/qoe-kept="-1"/);
  });

  it('names the attribute a bad value came from', () => {
    expect(() => read({ mode: 'fastest' })).toThrow(/mode="fastest" is not one of/);
    expect(() => read({ buffer: '0' })).toThrow(/buffer="0" must be positive/);
    expect(() => read({ k: '-1' })).toThrow(/k="-1" is not a non-negative number/);
    expect(() => read({ 'max-quality': '1.5' })).toThrow(/max-quality="1.5" is not auto or a whole number/);
  });

  it('reads max-quality as a ladder index, auto or absent as no cap', () => {
    expect(read({ 'max-quality': '2' }).maxQuality).toBe(2);
    expect(read({ 'max-quality': 'auto' }).maxQuality).toBeNull();
    expect(read({}).maxQuality).toBeNull();
  });
});

/** Compiled, not run: the event map types the element's listeners (tsc checks this file). */
export function typedListeners(element: HoloquicPlayerElement): void {
  element.addEventListener('seeked', (e) => e.detail.currentTime.toFixed());
  element.addEventListener('error', (e) => e.detail.code satisfies 1 | 2 | 3 | 4);
  element.addEventListener('qualitychange', (e) => Object.values(e.detail.qualities));
  document.body.addEventListener('transportchange', (e) => e.detail.transport);
}
