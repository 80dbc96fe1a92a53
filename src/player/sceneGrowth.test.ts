import { describe, expect, it } from 'vitest';
import type { SceneModel } from '../model/scene';
import { scene as testScene } from '../testing/scriptedLink';
import { ManifestError } from './mpd';
import { growScene } from './sceneGrowth';

/** A stage of a growing two-object scene: `seconds` published at the lowest `rungs` qualities. */
function stage(seconds: number, rungs: number, growing = true): SceneModel {
  const s = testScene(2);
  s.passDuration = seconds;
  for (const o of s.objects) {
    o.loopSegments = seconds;
    o.representations = o.representations.slice(0, rungs);
  }
  if (growing) s.updatePeriodS = 2;
  return s;
}

describe('growScene: a newer manifest of a growing scene extends the one playing', () => {
  it('takes more seconds, then new rungs above the known ones, then the final manifest', () => {
    const playing = stage(3, 1);
    const firstRung = playing.objects[0].representations[0];
    const seconds = growScene(playing, stage(10, 1));
    expect(seconds).toEqual({ durationS: { before: 3, after: 10 }, addedRungs: {}, finished: false, changed: true });
    expect(playing.objects.map((o) => o.loopSegments)).toEqual([10, 10]);

    const rung = growScene(playing, stage(10, 2));
    expect(rung.addedRungs).toEqual({ o0: ['1'], o1: ['1'] });
    expect(playing.objects[0].representations.map((r) => r.id)).toEqual(['0', '1']);
    // A known rung is the same object, so what holds it (plans, requests) sees its new rates.
    expect(playing.objects[0].representations[0]).toBe(firstRung);

    const final = growScene(playing, stage(10, 5, false));
    expect(final.finished).toBe(true);
    expect(playing.updatePeriodS).toBeUndefined();
    expect(playing.objects[1].representations).toHaveLength(5);
  });

  it('updates the rates of known rungs, and says when nothing changed', () => {
    const playing = stage(4, 2);
    const next = stage(4, 2);
    next.objects[0].representations[1].bandwidth = 2_500_000;
    expect(growScene(playing, next).changed).toBe(true);
    expect(playing.objects[0].representations[1].bandwidth).toBe(2_500_000);
    expect(growScene(playing, next)).toEqual({ durationS: { before: 4, after: 4 }, addedRungs: {}, finished: false, changed: false });
  });

  it('keeps the placement and bounding boxes it started with (the renderer placed the objects once)', () => {
    const playing = stage(3, 1);
    const next = stage(10, 1);
    next.objects[0].position = [9, 9, 9];
    next.objects[0].bbox = { min: [-1, -1, -1], max: [2, 2, 2] };
    growScene(playing, next);
    expect(playing.objects[0].position).toEqual([0, 0, 0]);
    expect(playing.objects[0].bbox).toEqual({ min: [0, 0, 0], max: [1, 1, 1] });
  });

  const refusals: Array<[string, (next: SceneModel) => void, RegExp]> = [
    ['fewer seconds', (n) => (n.passDuration = 2), /pass shrank from 3 s to 2 s/],
    ['fewer distinct segments', (n) => (n.objects[1].loopSegments = 2), /o1: 2 distinct segments, were 3/],
    ['another scene', (n) => (n.scene = 'other'), /scene "other"/],
    ['other segment lengths', (n) => (n.segmentDuration = 2), /segments of 2 s/],
    ['an object more', (n) => n.objects.push({ ...n.objects[0], id: 'o2' }), /objects o0, o1, o2, were o0, o1/],
    ['another file template', (n) => (n.objects[0].mediaTemplate = 'x/$Number$'), /o0: mediaTemplate/],
    ['another play mode', (n) => (n.objects[0].playMode = 'pingpong'), /o0: playMode/],
    ['a rung gone', (n) => (n.objects[0].representations = n.objects[0].representations.slice(1)), /Representation 0 (is gone|moved)/],
    ['a new rung below a known one', (n) => {
      const [low, high] = n.objects[0].representations;
      n.objects[0].representations = [{ ...high, id: 'new', rank: 0 }, { ...low, rank: 1 }];
    }, /Representation 0 moved from quality 0 to 1/],
  ];
  for (const [what, change, message] of refusals) {
    it(`refuses ${what}, leaving the scene as it was`, () => {
      const playing = stage(3, 1);
      const before = structuredClone(playing);
      const next = stage(3, 2);
      change(next);
      expect(() => growScene(playing, next)).toThrow(ManifestError);
      expect(() => growScene(playing, next)).toThrow(message);
      expect(playing).toEqual(before);
    });
  }
});
