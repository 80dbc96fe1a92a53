import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../player/mpd';
import { type SceneModel, type SceneObject } from '../model/scene';
import { rankObjects } from './ranking';
import type { Pose } from '../model/pose';
import type { Vec3 } from '../model/vectors';
import { fromRotationVector } from './quaternion';
import { proxiesFromScene, visibleFractions, type ObjectProxy } from './raycast';

const AT_ORIGIN_LOOKING_DOWN_Z: Pose = { t: 0, position: [0, 0, 0], orientation: [0, 0, 0, 1] };
const SQUARE = { fovYDeg: 90, aspect: 1 };

const sphere = (id: string, center: Vec3, r: number): ObjectProxy => ({ id, center, radii: [r, r, r] });

/** Fraction of a 90°×90° screen covered by a sphere of radius r at distance d on the view axis. */
function analyticDisc(r: number, d: number): number {
  const tanHalf = Math.tan(Math.asin(r / d));
  return (Math.PI * tanHalf * tanHalf) / 4;
}

describe('visibleFractions', () => {
  it('matches the analytic projected area of a sphere ahead', () => {
    const [f] = visibleFractions([sphere('s', [0, 0, -5], 1)], AT_ORIGIN_LOOKING_DOWN_Z, SQUARE, { rays: 40000 });
    expect(f).toBeGreaterThan(analyticDisc(1, 5) * 0.97);
    expect(f).toBeLessThan(analyticDisc(1, 5) * 1.03);
  });

  it('sees nothing behind the camera or outside the view, and everything from inside an object', () => {
    const proxies = [sphere('behind', [0, 0, 5], 1), sphere('left', [-10, 0, -1], 1)];
    expect([...visibleFractions(proxies, AT_ORIGIN_LOOKING_DOWN_Z, SQUARE)]).toEqual([0, 0]);
    const inside = visibleFractions([sphere('around', [0, 0, 0], 2), sphere('far', [0, 0, -10], 1)], AT_ORIGIN_LOOKING_DOWN_Z, SQUARE);
    expect(inside[0]).toBe(1);
    expect(inside[1]).toBe(0);
  });

  it('follows the head orientation: turning left brings the left object into view', () => {
    const proxies = [sphere('left', [-10, 0, 0], 1)];
    const turnedLeft: Pose = { t: 0, position: [0, 0, 0], orientation: fromRotationVector([0, Math.PI / 2, 0]) };
    expect(visibleFractions(proxies, AT_ORIGIN_LOOKING_DOWN_Z, SQUARE)[0]).toBe(0);
    expect(visibleFractions(proxies, turnedLeft, SQUARE)[0]).toBeGreaterThan(0);
  });

  it('a margin widens the view to objects just outside it', () => {
    // 50° off-axis: outside a 90° view (45° half-angle), inside with a 10° margin.
    const proxies = [sphere('edge', [-10 * Math.sin(0.873), 0, -10 * Math.cos(0.873)], 0.3)];
    expect(visibleFractions(proxies, AT_ORIGIN_LOOKING_DOWN_Z, SQUARE)[0]).toBe(0);
    expect(visibleFractions(proxies, AT_ORIGIN_LOOKING_DOWN_Z, SQUARE, { marginDeg: 10 })[0]).toBeGreaterThan(0);
  });

  it('gives a tiny far object its analytic area instead of zero, unless hidden', () => {
    const tiny = sphere('tiny', [0.01, 0, -200], 0.05);
    const [alone] = visibleFractions([tiny], AT_ORIGIN_LOOKING_DOWN_Z, SQUARE, { rays: 64 });
    expect(alone).toBeGreaterThan(0);
    expect(alone).toBeCloseTo(analyticDisc(0.05, 200), 9);
    const hidden = visibleFractions([tiny, sphere('wall', [0, 0, -20], 3)], AT_ORIGIN_LOOKING_DOWN_Z, SQUARE, { rays: 64 });
    expect(hidden[0]).toBe(0);
  });

  it('occlusion flips the ranking that bare projected areas give', () => {
    // A big object far away and a smaller one right in front of it: bare areas rank the big one
    // first, but the near one hides most of it.
    type Xyz = [number, number, number];
    const box = (id: string, min: Xyz, max: Xyz): SceneObject => ({
      id, codecs: '', position: [0, 0, 0], rotation: [0, 0, 0, 1], scale: 1, bbox: { min, max },
      representations: [], loopSegments: 1, playMode: 'loop', startNumber: 0, mediaTemplate: '',
    });
    const scene: SceneModel = {
      scene: 'occlusion', segmentDuration: 1, passDuration: 1,
      objects: [box('big-far', [-2, -2, -12], [2, 2, -8]), box('small-near', [-0.5, -0.5, -3.5], [0.5, 0.5, -2.5]), box('aside', [3, -0.5, -8], [4, 0.5, -7])],
    };
    const proxies = proxiesFromScene(scene);
    const eye: Pose = AT_ORIGIN_LOOKING_DOWN_Z;
    const projection = { fovYDeg: 60, aspect: 16 / 9 };
    const bare = visibleFractions(proxies, eye, projection, { occlusion: false });
    const occluded = visibleFractions(proxies, eye, projection);
    const model = (f: Float64Array) => ({ visibleArea: (id: string) => f[proxies.findIndex((p) => p.id === id)] });
    const ids = proxies.map((p) => p.id);
    expect(rankObjects(ids, model(bare), 0).map((r) => r.objectId)).toEqual(['big-far', 'small-near', 'aside']);
    expect(rankObjects(ids, model(occluded), 0).map((r) => r.objectId)).toEqual(['small-near', 'big-far', 'aside']);
    // Unhidden objects keep their area; the hidden one loses exactly what the near one covers.
    expect(occluded[1]).toBe(bare[1]);
    expect(occluded[2]).toBe(bare[2]);
    expect(occluded[0]).toBeLessThan(bare[0] - bare[1] * 0.9);
  });

  it('builds proxies from a packed demo manifest and rejects empty boxes and bad projections', () => {
    const scene = parseManifest(readFileSync(new URL('../../scripts/viewport/demo-manifest.mpd', import.meta.url), 'utf8'));
    const proxies = proxiesFromScene(scene);
    expect(proxies.map((p) => p.id)).toEqual(['figure-0', 'figure-1', 'figure-2', 'figure-3']);
    // Four figures on a 2 m circle, about 1.87 m tall.
    for (const p of proxies) {
      expect(Math.hypot(p.center[0], p.center[2])).toBeCloseTo(2, 1);
      expect(p.radii[1] * 2).toBeGreaterThan(1.8);
    }
    const flat = { ...scene, objects: [{ ...scene.objects[0], bbox: { min: [0, 0, 0] as [number, number, number], max: [1, 0, 1] as [number, number, number] } }] };
    expect(() => proxiesFromScene(flat)).toThrow(/figure-0: bounding box .* is empty/);
    expect(() => visibleFractions(proxies, AT_ORIGIN_LOOKING_DOWN_Z, { fovYDeg: 0, aspect: 1 })).toThrow(/invalid projection/);
    expect(() => visibleFractions(proxies, AT_ORIGIN_LOOKING_DOWN_Z, { fovYDeg: 60, aspect: NaN })).toThrow(/invalid projection/);
    expect(() => visibleFractions(proxies, AT_ORIGIN_LOOKING_DOWN_Z, SQUARE, { marginDeg: 60 })).toThrow(/marginDeg/);
    expect(() => visibleFractions(proxies, AT_ORIGIN_LOOKING_DOWN_Z, SQUARE, { rays: 0 })).toThrow(/rays/);
  });
});
