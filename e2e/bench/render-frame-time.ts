/**
 * Renderer frame time at 0.5 / 1 / 2 M points in headless Chromium (docs/benchmarks.md
 * "Renderer"). Serves the app with Vite's dev server, opens e2e/pages/render-bench.html and prints
 * a table.
 *
 *   npx tsx e2e/bench/render-frame-time.ts [--size 1280x720] [--splat round|square|sphere] [--screenshot out.png]
 */
import { parseArgs } from 'node:util';
import { createServer } from 'vite';
import type { RenderBenchResult } from '../pages/render-bench';
import { launch } from '../lib/browser';
import { ROOT } from '../lib/processes';

const { values } = parseArgs({ options: { size: { type: 'string', default: '1280x720' }, splat: { type: 'string', default: 'round' }, screenshot: { type: 'string' }, points: { type: 'string', default: '500000,1000000,2000000' } } });
const [width, height] = values.size!.split('x').map(Number);

const server = await createServer({ root: ROOT, configFile: `${ROOT}/vite.config.ts`, server: { port: 0, host: '127.0.0.1' }, logLevel: 'warn' });
await server.listen();
const address = server.httpServer!.address();
const port = typeof address === 'object' && address ? address.port : 0;
const browser = await launch();
try {
  await browser.page.setViewportSize({ width, height });
  await browser.page.goto(`http://127.0.0.1:${port}/e2e/pages/render-bench.html`);
  await browser.page.waitForFunction(() => 'holoquicRenderBench' in window);
  const rows: RenderBenchResult[] = [];
  for (const points of values.points!.split(',').map(Number)) {
    const r = await browser.page.evaluate(([p, s]) => window.holoquicRenderBench.run({ points: p as number, splat: s as never, frames: 10 }), [points, values.splat] as const);
    rows.push(r);
    console.error(`${points}: ${r.meanMs.toFixed(1)} ms`);
  }
  if (values.screenshot) await browser.page.screenshot({ path: values.screenshot });
  console.log(`renderer: ${rows[0].renderer}, ${rows[0].width}×${rows[0].height}, splat ${values.splat}`);
  console.log('| points | frame ms (mean) | p95 | fps | frame ms with new frames uploaded |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${(r.points / 1e6).toFixed(1)} M | ${r.meanMs.toFixed(1)} | ${r.p95Ms.toFixed(1)} | ${(1000 / r.meanMs).toFixed(1)} | ${r.uploadMeanMs.toFixed(1)} |`);
  }
} finally {
  await browser.close();
  await server.close();
}
