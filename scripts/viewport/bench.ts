/**
 * Cost of the viewport model on this machine: one ranking of the demo scene's 4 objects at a new
 * playout time (a ray pass + 4 look-ups) with the default 2048 rays, and the predictor's per-pose
 * update and prediction.
 *
 *   npx tsx scripts/viewport/bench.ts
 */
import { readFileSync } from 'node:fs';
import { parseManifest } from '../../src/player/mpd';
import { rankObjects } from '../../src/viewport/ranking';
import { createDefaultPredictor } from '../../src/viewport/predictors';
import { createViewportModel } from '../../src/viewport/visibility';
import { loadTraces } from './traces';

const scene = parseManifest(readFileSync(new URL('./demo-manifest.mpd', import.meta.url), 'utf8'));
const ids = scene.objects.map((o) => o.id);
const trace = loadTraces(['hhi'])[0].poses;

/** Best of 5 rounds (the machine is shared: the least disturbed round is the closest to the cost). */
function timeIt(label: string, runs: number, fn: () => void): void {
  for (let i = 0; i < Math.min(runs, 200); i++) fn(); // warm up the JIT
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    for (let i = 0; i < runs; i++) fn();
    best = Math.min(best, ((performance.now() - start) / runs) * 1000);
  }
  console.log(`${label}: ${best.toFixed(1)} µs per call (best of 5 × ${runs})`);
}

let predictor = createDefaultPredictor();
let k = 0;
timeIt('default predictor observe()', 2000, () => {
  if (k === trace.length) {
    predictor = createDefaultPredictor();
    k = 0;
  }
  predictor.observe(trace[k++]);
});
timeIt('default predictor predict(1000 ms)', 10_000, () => predictor.predict(1000));

for (const rays of [512, 2048, 8192]) {
  let session = 0;
  const model = createViewportModel(scene, { now: () => session, raycast: { rays } });
  // Poses placed 5 m in front of the circle, walking and turning as in the trace; one ranking per
  // pose (a new time), so every call pays a full ray pass.
  for (let i = 0; i < 300; i++) model.observe(trace[i]);
  let i = 300;
  timeIt(`rankObjects(4 objects) at a new time, ${rays} rays`, 1000, () => {
    session += 1;
    rankObjects(ids, model, session + 1000);
    const p = trace[i++ % trace.length];
    if (i < trace.length) model.observe({ ...p, position: [p.position[0], p.position[1] + 1.6, p.position[2] + 5] });
  });
}
