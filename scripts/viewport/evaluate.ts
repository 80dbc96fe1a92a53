/**
 * Evaluates the head-pose predictors on every trace in ../shared/data/pose and prints Markdown
 * tables (the ones in docs/results.md, "Viewport prediction"):
 *
 *   npx tsx scripts/viewport/evaluate.ts            pose error + object-level accuracy
 *   npx tsx scripts/viewport/evaluate.ts --fit      refit the gains of the default predictor and
 *                                                   print them for src/viewport/defaultGains.ts
 *
 * Options: --datasets hhi,cwi  --fov 60 --aspect 1.7778 (projection for object-level accuracy)
 *          --stride 5 (object-level accuracy on every 5th sample)  --pose-only (skip object level)
 *
 * The horizon-gain predictor is scored out of sample: traces are split in two folds (alternate
 * files) and each fold is predicted with gains fitted on the other.
 */
import { readFileSync } from 'node:fs';
import { parseManifest } from '../../src/player/mpd';
import { DEFAULT_HORIZON_GAINS, GAIN_HORIZONS_MS } from '../../src/viewport/defaultGains';
import { HorizonGainPredictor, type HorizonGain } from '../../src/viewport/horizonGains';
import { KalmanPredictor } from '../../src/viewport/kalman';
import type { Predictor } from '../../src/viewport/predictor';
import { ConstantVelocityPredictor, LastValuePredictor } from '../../src/viewport/predictors';
import { proxiesFromScene, visibleFractions, type Projection } from '../../src/viewport/raycast';
import { fitHorizonGains } from './fitGains';
import { SetAccuracy, topVisible } from './objectAccuracy';
import { placeTrace } from './placement';
import { evaluateHorizons, meanAndP95, poseAt } from './predictionError';
import { loadTraces, type Dataset, type LoadedTrace } from './traces';

const HORIZONS_MS = [100, 200, 300, 500, 1000];
const OBJECT_HORIZONS_MS = [500, 1000, 2000];
const MARGINS_DEG = [0, 10, 20];
const TOP_K = [1, 2, 4];
const MANIFEST = new URL('./demo-manifest.mpd', import.meta.url);

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

function numberOption(name: string, fallback: number): number {
  const v = Number(option(name, String(fallback)));
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}

interface Contender {
  name: string;
  /** A fresh predictor for trace number `index` (of all loaded traces). */
  make(index: number): Predictor;
}

function contenders(traces: readonly LoadedTrace[]): Contender[] {
  const fold = (i: number) => i % 2;
  const foldGains: HorizonGain[][] = [0, 1].map((f) =>
    fitHorizonGains(traces.filter((_, i) => fold(i) !== f).map((t) => t.poses), GAIN_HORIZONS_MS));
  return [
    { name: 'last value (no prediction)', make: () => new LastValuePredictor() },
    { name: 'constant velocity, 100 ms regression (baseline)', make: () => new ConstantVelocityPredictor({ windowMs: 100 }) },
    { name: 'constant velocity, 50 ms, 300 ms turn decay', make: () => new ConstantVelocityPredictor({ windowMs: 50, orientationDecayMs: 300 }) },
    { name: 'Kalman, constant velocity', make: () => new KalmanPredictor() },
    { name: 'Kalman, constant acceleration', make: () => new KalmanPredictor({ positionOrder: 3, orientationOrder: 3 }) },
    { name: 'Kalman + horizon gains (2-fold out of sample)', make: (i) => new HorizonGainPredictor(foldGains[fold(i)]) },
  ];
}

function poseTables(traces: readonly LoadedTrace[], all: readonly LoadedTrace[], list: Contender[]): string {
  const rows: string[] = [];
  const head = HORIZONS_MS.map((h) => `${h} ms`).join(' | ');
  rows.push(`| predictor | ${head} |`, `|---|${HORIZONS_MS.map(() => '---').join('|')}|`);
  for (const c of list) {
    const position = HORIZONS_MS.map(() => [] as number[]);
    const orientation = HORIZONS_MS.map(() => [] as number[]);
    for (const t of traces) {
      evaluateHorizons(t.poses, c.make(all.indexOf(t)), HORIZONS_MS).forEach((e, k) => {
        for (const v of e.position) position[k].push(v * 100);
        for (const v of e.orientationDeg) orientation[k].push(v);
      });
    }
    const cells = HORIZONS_MS.map((_, k) => {
      const p = meanAndP95(position[k]);
      const o = meanAndP95(orientation[k]);
      return `${o.mean.toFixed(2)}° / ${o.p95.toFixed(1)}° · ${p.mean.toFixed(1)} / ${p.p95.toFixed(1)} cm`;
    });
    rows.push(`| ${c.name} | ${cells.join(' | ')} |`);
  }
  return rows.join('\n');
}

function objectTables(traces: readonly LoadedTrace[], all: readonly LoadedTrace[], list: Contender[], dataset: Dataset, projection: Projection, stride: number): string {
  const scene = parseManifest(readFileSync(MANIFEST, 'utf8'));
  const proxies = proxiesFromScene(scene);
  const rays = 512;
  // acc[contender][horizon][margin][k]
  const acc = list.map(() => OBJECT_HORIZONS_MS.map(() => MARGINS_DEG.map(() => TOP_K.map(() => new SetAccuracy()))));
  for (const trace of traces) {
    const poses = placeTrace(trace.poses, dataset, scene);
    list.forEach((c, ci) => {
      const predictor = c.make(all.indexOf(trace));
      for (let i = 0; i < poses.length; i++) {
        predictor.observe(poses[i]);
        if (i % stride !== 0) continue;
        OBJECT_HORIZONS_MS.forEach((h, hi) => {
          const truth = poseAt(poses, poses[i].t + h / 1000, i + 1);
          if (!truth) return;
          const real = visibleFractions(proxies, truth, projection, { rays });
          const guess = predictor.predict(h);
          MARGINS_DEG.forEach((marginDeg, mi) => {
            const predicted = visibleFractions(proxies, guess, projection, { rays, marginDeg });
            TOP_K.forEach((k, ki) => acc[ci][hi][mi][ki].add(topVisible(predicted, k), topVisible(real, k)));
          });
        });
      }
    });
  }
  const rows: string[] = [];
  const columns = MARGINS_DEG.flatMap((m) => TOP_K.map((k) => `k=${k}, +${m}°`));
  rows.push(`| predictor | horizon | ${columns.join(' | ')} |`, `|---|---|${columns.map(() => '---').join('|')}|`);
  list.forEach((c, ci) => {
    OBJECT_HORIZONS_MS.forEach((h, hi) => {
      const cells = MARGINS_DEG.flatMap((_, mi) => TOP_K.map((_, ki) => {
        const a = acc[ci][hi][mi][ki];
        return `${(a.precision * 100).toFixed(0)} / ${(a.recall * 100).toFixed(0)}`;
      }));
      rows.push(`| ${c.name} | ${h} ms | ${cells.join(' | ')} |`);
    });
  });
  return rows.join('\n');
}

function printGains(gains: readonly HorizonGain[]): void {
  const f = (v: number) => v.toFixed(4);
  console.log('export const DEFAULT_HORIZON_GAINS: readonly HorizonGain[] = [');
  for (const { horizonMs, position: p, orientation: o } of gains) {
    console.log(`  { horizonMs: ${horizonMs}, position: { horizontal: ${f(p.horizontal)}, vertical: ${f(p.vertical)} }, ` +
      `orientation: { yaw: ${f(o.yaw)}, tilt: ${f(o.tilt)}, level: ${f(o.level)} } },`);
  }
  console.log('];');
}

function main(): void {
  const datasets = option('datasets', 'hhi,cwi').split(',') as Dataset[];
  const all = loadTraces(datasets);
  if (process.argv.includes('--fit')) {
    printGains(fitHorizonGains(all.map((t) => t.poses), GAIN_HORIZONS_MS));
    return;
  }
  const projection = { fovYDeg: numberOption('fov', 60), aspect: numberOption('aspect', 16 / 9) };
  const stride = numberOption('stride', 5);
  const list = contenders(all);
  list.push({ name: 'default predictor (gains fitted on all traces)', make: () => new HorizonGainPredictor(DEFAULT_HORIZON_GAINS) });
  for (const dataset of datasets) {
    const traces = all.filter((t) => t.dataset === dataset);
    const samples = traces.reduce((n, t) => n + t.poses.length, 0);
    console.log(`\n### ${dataset.toUpperCase()}: ${traces.length} traces, ${samples} samples\n`);
    console.log('Orientation MAE / p95 · position MAE / p95, per horizon:\n');
    console.log(poseTables(traces, all, list));
    if (process.argv.includes('--pose-only')) continue;
    console.log(`\nTop-k visible objects in the demo scene, precision / recall (%), every ${stride}th sample, ` +
      `fov ${projection.fovYDeg}° × aspect ${projection.aspect.toFixed(2)}, margin widens the predicted view:\n`);
    console.log(objectTables(traces, all, list, dataset, projection, stride));
  }
}

main();
