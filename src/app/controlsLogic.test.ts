import { describe, expect, it } from 'vitest';
import type { SceneModel } from '../model/scene';
import { bufferedGradient, capOfChoice, controlsShown, formatTime, qualityChoices, timelineKeyTarget, timeText } from './controlsLogic';

describe('the controls attribute', () => {
  it('absent: the XR buttons only (as before); present: the whole bar; off or false: nothing', () => {
    expect(controlsShown(null)).toBe('xr');
    expect(controlsShown('')).toBe('full');
    expect(controlsShown('on')).toBe('full');
    expect(controlsShown('off')).toBe('none');
    expect(controlsShown('false')).toBe('none');
  });
});

describe('time formatting', () => {
  it('reads m:ss, h:mm:ss from an hour on, whole seconds rounded down', () => {
    expect(formatTime(0)).toBe('0:00');
    expect(formatTime(9.99)).toBe('0:09');
    expect(formatTime(65)).toBe('1:05');
    expect(formatTime(3600 + 62)).toBe('1:01:02');
    expect(formatTime(NaN)).toBe('-:--');
    expect(timeText(12.5, 30)).toBe('0:12 of 0:30');
  });
});

describe('timeline keys', () => {
  it('arrows move 5 s, Page keys 10 s, Home and End the ends, clamped; other keys are not the timeline\'s', () => {
    expect(timelineKeyTarget('ArrowRight', 3, 30)).toBe(8);
    expect(timelineKeyTarget('ArrowUp', 3, 30)).toBe(8);
    expect(timelineKeyTarget('ArrowLeft', 3, 30)).toBe(0);
    expect(timelineKeyTarget('ArrowDown', 12, 30)).toBe(7);
    expect(timelineKeyTarget('PageUp', 12, 30)).toBe(22);
    expect(timelineKeyTarget('ArrowRight', 28, 30)).toBe(30);
    expect(timelineKeyTarget('Home', 12, 30)).toBe(0);
    expect(timelineKeyTarget('End', 12, 30)).toBe(30);
    expect(timelineKeyTarget('Tab', 12, 30)).toBeNull();
    expect(timelineKeyTarget('ArrowRight', 0, NaN)).toBeNull();
  });
});

describe('buffered ranges on the track', () => {
  it('paints each range between hard stops, the rest plain', () => {
    expect(bufferedGradient([], 10, 'B', 'R')).toBe('R');
    expect(bufferedGradient([[2, 5]], 10, 'B', 'R')).toBe('linear-gradient(to right, R 0.00%, R 20.00%, B 20.00%, B 50.00%, R 50.00%, R 100%)');
    const two = bufferedGradient([[8, 10], [0, 1]], 10, 'B', 'R');
    expect(two.indexOf('B 0.00%')).toBeLessThan(two.indexOf('B 80.00%'));
  });
});

describe('the quality menu', () => {
  const object = (points: number[]) => ({ representations: points.map((p, rank) => ({ rank, pointsPerFrame: p })) });
  const scene = { objects: [object([1000, 5000, 20000]), object([2000, 6000, 1_000_000])] } as unknown as SceneModel;

  it('offers Auto, then a cap per rung, highest first, with the scene\'s points at it', () => {
    const choices = qualityChoices(scene);
    expect(choices.map((c) => c.value)).toEqual(['auto', '2', '1', '0']);
    expect(choices[1].label).toBe('Up to 3 (highest) · 1.0 M points');
    expect(choices[3].label).toBe('Up to 1 (lowest) · 3 k points');
    expect(qualityChoices(null)).toEqual([{ value: 'auto', label: 'Auto' }]);
  });

  it('reads a menu value back as a cap', () => {
    expect(capOfChoice('auto')).toBeNull();
    expect(capOfChoice('2')).toBe(2);
    expect(capOfChoice('x')).toBeNull();
  });
});
