import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_HORIZON_GAINS } from '../../src/viewport/defaultGains';
import { KalmanPredictor } from '../../src/viewport/kalman';
import { ConstantVelocityPredictor, LastValuePredictor, createDefaultPredictor } from '../../src/viewport/predictors';
import { parseTrace } from '../../src/viewport/trace';
import { evaluatePredictor } from './predictionError';
import { POSE_DIR } from './traces';

describe('predictors on real head motion', () => {
  it('constant velocity, and the default predictor, beat last value at 300 ms on a real HHI trace', () => {
    const file = POSE_DIR + '/hhi_hololens/hololens_trace_01.csv';
    const trace = parseTrace(readFileSync(file, 'utf8'), { convention: 'unity-left-handed', source: file });
    const last = evaluatePredictor(trace, new LastValuePredictor(), 300);
    const cv = evaluatePredictor(trace, new ConstantVelocityPredictor({ windowMs: 100 }), 300);
    const best = evaluatePredictor(trace, createDefaultPredictor(), 300);
    const show = (name: string, e: typeof last) =>
      `${name} ${e.orientationMaeDeg.toFixed(2)}° / ${(e.positionMae * 100).toFixed(2)} cm`;
    console.log(`HHI trace 01 @300 ms (n=${best.samples}): ${show('last value', last)}, ${show('constant velocity', cv)}, ${show('default', best)}`);
    expect(cv.orientationMaeDeg).toBeLessThan(last.orientationMaeDeg);
    expect(best.samples).toBeGreaterThan(4000);
    expect(best.orientationMaeDeg).toBeLessThan(last.orientationMaeDeg);
    expect(best.positionMae).toBeLessThan(last.positionMae);
  });

  it('the default predictor beats constant velocity and the plain Kalman filter on a real HHI trace', () => {
    const file = POSE_DIR + '/hhi_hololens/hololens_trace_03.csv';
    const trace = parseTrace(readFileSync(file, 'utf8'), { convention: 'unity-left-handed', source: file });
    expect(DEFAULT_HORIZON_GAINS.length).toBeGreaterThan(3);
    for (const h of [200, 500]) {
      const best = evaluatePredictor(trace, createDefaultPredictor(), h);
      const kf = evaluatePredictor(trace, new KalmanPredictor(), h);
      const cv = evaluatePredictor(trace, new ConstantVelocityPredictor({ windowMs: 100 }), h);
      expect(best.orientationMaeDeg).toBeLessThan(Math.min(kf.orientationMaeDeg, cv.orientationMaeDeg));
      expect(best.positionMae).toBeLessThan(Math.min(kf.positionMae, cv.positionMae));
    }
  });
});
