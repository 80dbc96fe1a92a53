import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../player/mpd';
import { rankObjects } from './ranking';
import type { Pose } from '../model/pose';
import type { Predictor } from './predictor';
import { LastValuePredictor } from './predictors';
import { fromRotationVector } from './quaternion';
import { visibleFractions, proxiesFromScene } from './raycast';
import { createViewportModel } from './visibility';

const scene = parseManifest(readFileSync(new URL('../../scripts/viewport/demo-manifest.mpd', import.meta.url), 'utf8'));
const IDS = scene.objects.map((o) => o.id);

/** Looking from 4 m out on +z toward the circle's centre: figure-0 (at +z) in front. */
const FRONT: Pose = { t: 0, position: [0, 1.6, 5], orientation: [0, 0, 0, 1] };

/** A predictor that records the horizons it is asked for and answers with the latest pose. */
class RecordingPredictor implements Predictor {
  readonly horizons: number[] = [];
  private readonly inner = new LastValuePredictor();
  observe(pose: Pose): void {
    this.inner.observe(pose);
  }
  predict(horizonMs: number): Pose {
    this.horizons.push(horizonMs);
    return this.inner.predict(horizonMs);
  }
}

describe('createViewportModel', () => {
  it('before any pose, looks from the default viewpoint at the origin (figure-0 in front, most visible)', () => {
    const model = createViewportModel(scene, { now: () => 0 });
    const ranked = rankObjects(IDS, model, 0);
    expect(model.predictorName).toBe('default');
    expect(createViewportModel(scene, { createPredictor: () => new LastValuePredictor() }).predictorName).toBe('LastValuePredictor');
    expect(ranked[0].objectId).toBe('figure-0');
    expect(ranked[0].visibleArea).toBeGreaterThan(0);
  });

  it('aligns source time to the session clock by the least-delayed arrival and predicts that far ahead', () => {
    let session = 50_000; // ms; the source clock starts at 10 s
    const predictor = new RecordingPredictor();
    const model = createViewportModel(scene, { createPredictor: () => predictor, now: () => session });
    model.observe({ ...FRONT, t: 10 }); // arrives 0 ms late → offset 40 000 ms
    session += 30; // the next one arrives 13 ms late
    model.observe({ ...FRONT, t: 10.017 });
    // Segment playing at session 50 500 ms: latest pose is at 10.017 s ≙ 50 017 ms → 483 ms ahead.
    model.visibleArea('figure-0', 50_500);
    expect(predictor.horizons.at(-1)).toBeCloseTo(483, 6);
    // A time before the latest pose asks for no extrapolation rather than a negative horizon.
    model.visibleArea('figure-0', 49_000);
    expect(predictor.horizons.at(-1)).toBe(0);
    // After more than a second, the old least-delayed arrival no longer counts.
    session = 52_047;
    model.observe({ ...FRONT, t: 12.017 }); // 30 ms late: offset now 40 030 ms
    model.visibleArea('figure-0', 52_547);
    expect(predictor.horizons.at(-1)).toBeCloseTo(500, 6);
  });

  it('computes one ray pass per time and pose, shared by all objects', () => {
    const predictor = new RecordingPredictor();
    const model = createViewportModel(scene, { createPredictor: () => predictor, now: () => 0 });
    model.observe(FRONT);
    const ranked = rankObjects(IDS, model, 1000);
    expect(predictor.horizons).toHaveLength(1);
    for (const r of ranked) expect(r.visibleArea).toBe(model.visibleAreas(1000).get(r.objectId));
    model.observe({ ...FRONT, t: 0.02 });
    model.visibleArea('figure-1', 1000);
    expect(predictor.horizons).toHaveLength(2);
  });

  it('uses the projection it is given and the predicted, not the latest, pose', () => {
    let session = 0;
    const model = createViewportModel(scene, { now: () => session });
    // From the circle's centre, turning left at 2 rad/s about y, away from figure-2 (at −z) toward
    // figure-3 (at −x); poses arrive without delay on a session clock equal to the source clock.
    for (let i = 0; i <= 30; i++) {
      const t = i / 60;
      session = t * 1000;
      model.observe({ t, position: [0, 1.6, 0], orientation: fromRotationVector([0, 2 * t, 0]) });
    }
    const now = model.visibleAreas(500); // horizon 0: turned 1 rad so far
    const later = model.predictedPose(1500);
    expect(later.t).toBeCloseTo(1.5, 6);
    const ahead = model.visibleAreas(1500);
    // Figure-2 is at the edge of the view now and behind the turn a second later.
    expect(now.get('figure-2')).toBeGreaterThan(0);
    expect(ahead.get('figure-2')).toBe(0);
    expect(ahead.get('figure-3')).toBeGreaterThan(0);
    model.setProjection({ fovYDeg: 20, aspect: 1 });
    const narrow = model.visibleAreas(1500);
    const proxies = proxiesFromScene(scene);
    const expected = visibleFractions(proxies, later, { fovYDeg: 20, aspect: 1 });
    IDS.forEach((id, i) => expect(narrow.get(id)).toBeCloseTo(expected[i], 12));
  });

  it('rejects bad input with clear errors', () => {
    const model = createViewportModel(scene, { now: () => 0 });
    expect(() => model.visibleArea('nobody', 0)).toThrow(/unknown object "nobody"/);
    expect(() => model.visibleArea('figure-0', NaN)).toThrow(/not finite/);
    expect(() => model.setProjection({ fovYDeg: 200, aspect: 1 })).toThrow(/invalid projection/);
    expect(() => createViewportModel(scene, { projection: { fovYDeg: 60, aspect: 0 } })).toThrow(/invalid projection/);
    expect(() => createViewportModel(scene, { raycast: { marginDeg: -1 } })).toThrow(/marginDeg/);
    expect(() => model.observe({ ...FRONT, t: NaN })).toThrow(/not finite/);
  });

  it('starts over when the pose source restarts (time goes back), drops exact repeats', () => {
    let session = 100_000;
    const made: RecordingPredictor[] = [];
    const model = createViewportModel(scene, {
      now: () => session,
      createPredictor: () => {
        made.push(new RecordingPredictor());
        return made[made.length - 1];
      },
    });
    model.observe({ ...FRONT, t: 50 });
    model.observe({ ...FRONT, t: 50 }); // repeat: ignored
    session += 10;
    model.observe({ ...FRONT, t: 0 }); // a new trace replay from 0 s
    expect(made).toHaveLength(2);
    // The offset is re-learned from the new source alone: t = 0 ≙ session 100 010 ms.
    model.visibleArea('figure-0', 100_310);
    expect(made[1].horizons).toEqual([300]);
    expect(made[0].horizons).toEqual([]);
  });
});
