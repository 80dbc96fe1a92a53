/**
 * GPU against CPU reconstruction per frame (docs/benchmarks.md "GPU reconstruction"): the first
 * segment of every quality of one demo object, decoded in the real decoder pool with both
 * outputs; the CPU time is the worker's reconstruction (wasm, no post-processing) plus the copy
 * out, the GPU time the atlas upload + vertex shader over every atlas pixel + transform-feedback
 * readback on this browser's WebGL2 (SwiftShader here: software).
 *
 *   npx tsx e2e/bench/gpu-reconstruction.ts [--frames 10] [--object figure-0]
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { GpuCompareResult } from '../pages/decoder';
import { launch } from '../lib/browser';
import { demoContentRoot } from '../lib/content';
import { startOrigin } from '../lib/processes';

const { values } = parseArgs({ options: { frames: { type: 'string', default: '10' }, object: { type: 'string', default: 'figure-0' } } });
const content = demoContentRoot();
const qualities = readdirSync(join(content, 'demo', values.object!)).filter((q) => /^\d+$/.test(q)).sort((a, b) => +a - +b);
const origin = await startOrigin(content);
const browser = await launch();
try {
  await browser.page.goto(`${origin.httpBase}/e2e/pages/decoder.html`);
  await browser.page.waitForFunction(() => 'holoquicDecoderTest' in window);
  console.log('| quality | points / frame | atlas (maps) | CPU reconstruction ms / frame | GPU upload + shader + readback ms / frame | positions identical | colours identical |');
  console.log('|---|---|---|---|---|---|---|');
  for (const q of qualities) {
    const path = `/content/demo/${values.object}/${q}/seg-00000.v3c`;
    const r = (await browser.page.evaluate(([p, n]) => window.holoquicDecoderTest.gpuCompare(p, { frames: n }), [path, Number(values.frames)] as const)) as GpuCompareResult;
    if (r.error) throw new Error(`${path}: ${r.error}`);
    const frames = r.frames!;
    const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
    // The first frame pays for shader compilation and texture allocation: left out.
    const gpu = mean(frames.slice(1).map((f) => f.gpuMs));
    const cpu = mean(r.cpuFrameMs!.slice(1));
    const samePositions = frames.every((f) => f.positionMismatches === 0 && f.countA === f.countB);
    const maxColorDiff = Math.max(...frames.map((f) => f.maxColorDiff));
    const exact = 100 * mean(frames.map((f) => f.exactColorShare));
    const a = frames[0].atlas;
    console.log(`| ${q} | ${Math.round(mean(frames.map((f) => f.countA))).toLocaleString('en')} | ${a.width}×${a.height} (${a.maps}) | ${cpu.toFixed(1)} | ${gpu.toFixed(1)} | ${samePositions ? 'yes' : 'NO'} | ${exact.toFixed(4)} % (max diff ${maxColorDiff}) |`);
  }
} finally {
  await browser.close();
  await origin.stop();
}
