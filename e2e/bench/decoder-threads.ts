/**
 * One decoder's frame rate in Chromium, single-threaded against threaded core module
 * (docs/benchmarks.md "One decoder, threaded"): a V3C segment file (any: e.g. a ~200 k-point
 * Rec1-smoothed AVC stream made with `vpcc-encode --smoothing`) decoded by the decoder check page
 * (one segment: one worker of the pool at work), on the real origin with and without
 * `--cross-origin-isolate`.
 * Per frame: the worker's reconstruction + post-processing + copy out (`timing.frameMs`), the
 * median over the segment's frames and `--repeat` decodes (the first decode, which compiles the
 * module, is left out). Video decoding (WebCodecs) is not in it.
 *
 *   npx tsx e2e/bench/decoder-threads.ts SEGMENT.v3c [--repeat 5]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { launch } from '../lib/browser';
import { demoContentRoot } from '../lib/content';
import { startOrigin } from '../lib/processes';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { repeat: { type: 'string', default: '5' } } });
const [segmentFile] = positionals;
if (!segmentFile) throw new Error('usage: decoder-threads.ts SEGMENT.v3c [--repeat N]');
const bytes = readFileSync(segmentFile);
const repeat = Number(values.repeat);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

for (const isolate of [false, true]) {
  const origin = await startOrigin(demoContentRoot(), isolate ? ['--cross-origin-isolate'] : []);
  const browser = await launch();
  try {
    // Served to the page by Playwright: the segment is benchmark material outside the content root.
    await browser.page.route('**/bench-segment.v3c', (route) => route.fulfill({ body: bytes }));
    await browser.page.goto(`${origin.httpBase}/e2e/pages/decoder.html`);
    await browser.page.waitForFunction(() => 'holoquicDecoderTest' in window);
    const frameMs: number[] = [];
    let label = '';
    for (let r = 0; r <= repeat; r++) {
      const result = await browser.page.evaluate(() => window.holoquicDecoderTest.decode('/bench-segment.v3c'));
      if (result.error) throw new Error(`${result.error}\n${browser.log.slice(-10).join('\n')}`);
      label = `${result.core?.kind} (${result.core?.threads} thread(s)), ${result.points![0]} points in frame 0`;
      if (r > 0) frameMs.push(...result.frameMs!);
    }
    const ms = median(frameMs);
    console.log(`${isolate ? 'isolated' : 'not isolated'}: ${label}: ${ms.toFixed(1)} ms/frame → ${(1000 / ms).toFixed(1)} frames/s (median of ${frameMs.length} frames)`);
  } finally {
    await browser.close();
    await origin.stop();
  }
}
