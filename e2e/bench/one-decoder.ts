/**
 * One decoder's frame rate in headless Chromium (docs/benchmarks.md "One decoder in Chromium"):
 * a segment's frames reconstructed and post-processed again and again by one worker, on a page
 * served by the real origin with `--cross-origin-isolate` (COOP + COEP: the worker runs the
 * threaded core module `vpcc-mt`) and without it (the single-threaded `vpcc`) — the player's
 * own choice (src/decoder/coreModule.ts). The video pictures are decoded beforehand, natively
 * (vpcc-dump-pictures), and stay in wasm memory, so a run times reconstruction and
 * post-processing only, as wasm/tools/wasm_bench.ts does in Node.
 *
 * Per build it prints wall ms per frame (median and mean over `--rounds` passes over every frame)
 * and the CPU time of the page's worker threads per frame, read from /proc (Linux) around each
 * run: the decoder's own thread and, in the threaded build, its helper threads (Chromium names
 * every Web Worker thread "DedicatedWorker"; the page runs no other). On a machine busy with
 * other work wall time includes waiting for a core; CPU time does not, and the decoder thread's
 * CPU time bounds what a frame would take on free cores from below; the run's wall time less the
 * decoder thread's waits for a core (its own work plus its waits for helpers) estimates it.
 *
 *   npx tsx e2e/bench/one-decoder.ts STREAM.v3c [--rounds 10] [--only threaded|single]
 *
 * STREAM: any V3C sample stream with video the native build decodes; the ~200 k-point
 * Rec1-smoothed CesiumMan stream of docs/benchmarks.md is made by scripts/bench/cesium-stream.sh.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { dumpPictures } from '../../wasm/tests/wasm_support';
import { packPictures } from '../../wasm/tests/dumped_pictures';
import { launch } from '../lib/browser';
import { demoContentRoot } from '../lib/content';
import { requireBuilt, ROOT, startOrigin } from '../lib/processes';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '10' }, only: { type: 'string' }, 'dump-tool': { type: 'string', default: resolve(ROOT, 'wasm/build-native/vpcc-dump-pictures') } },
});
const [streamFile] = positionals;
if (!streamFile) throw new Error('usage: one-decoder.ts STREAM.v3c [--rounds N] [--only threaded|single]');
const rounds = Number(values.rounds);
if (!(rounds >= 1 && rounds <= 1000)) throw new Error('--rounds: 1 to 1000');
requireBuilt(values['dump-tool']!);
const segment = readFileSync(streamFile);
const pictures = packPictures(dumpPictures(values['dump-tool']!, streamFile));

/** Processes below this one (the origin, Chromium and its children), by walking /proc's parent links. */
function descendants(): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of stat, after the command name in parentheses (which may hold spaces).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(+entry, +stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      // (gone meanwhile)
    }
  }
  const found: number[] = [];
  const wanted = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parentOf) {
      if (wanted.has(parent) && !wanted.has(pid)) {
        wanted.add(pid);
        found.push(pid);
        grew = true;
      }
    }
  }
  return found;
}

/** What the scheduler counted for one thread so far (ns, /proc/…/schedstat): time on a core, and time ready but waiting for one. */
interface ThreadTimes {
  cpu: number;
  waitingForCore: number;
}

/** Times of every Web Worker thread of Chromium's processes, by thread id. */
function workerThreadTimes(): Map<number, ThreadTimes> {
  const times = new Map<number, ThreadTimes>();
  for (const pid of descendants()) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        if (!readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').startsWith('DedicatedWorker')) continue;
        const [cpu, waitingForCore] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        times.set(+tid, { cpu, waitingForCore });
      } catch {
        // (gone meanwhile)
      }
    }
  }
  return times;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const fixed = (v: number) => v.toFixed(1);

console.log(`stream ${streamFile}, ${rounds} rounds; load average at start ${loadavg().map(fixed).join(' ')}`);
const builds = values.only ? [values.only === 'threaded'] : [true, false];
for (const isolate of builds) {
  const origin = await startOrigin(demoContentRoot(), isolate ? ['--cross-origin-isolate'] : []);
  const browser = await launch();
  try {
    // Served to the page by Playwright: benchmark material outside the content root.
    await browser.page.route('**/bench-segment.v3c', (route) => route.fulfill({ body: segment }));
    await browser.page.route('**/bench-pictures.bin', (route) => route.fulfill({ body: Buffer.from(pictures.buffer, pictures.byteOffset, pictures.byteLength) }));
    await browser.page.goto(`${origin.httpBase}/e2e/pages/decoder-bench.html`);
    await browser.page.waitForFunction(() => 'holoquicDecoderBench' in window);
    const loaded = await browser.page.evaluate(() => window.holoquicDecoderBench.load('/bench-segment.v3c', '/bench-pictures.bin'));
    const frames = loaded.points.length;
    console.log(
      `${isolate ? 'cross-origin isolated' : 'not isolated'} (page says ${loaded.crossOriginIsolated}): ${loaded.core.kind} build, ${loaded.core.threads} thread(s); ` +
        `${frames} frames of ${Math.min(...loaded.points)}–${Math.max(...loaded.points)} points`,
    );
    await browser.page.evaluate(() => window.holoquicDecoderBench.run(1, true));  // warm-up
    for (const postProcess of [true, false]) {
      const before = workerThreadTimes();
      const start = performance.now();
      const frameMs = await browser.page.evaluate(([r, p]) => window.holoquicDecoderBench.run(r, p), [rounds, postProcess] as const);
      const runMs = performance.now() - start;  // (the same window as the thread times)
      const after = workerThreadTimes();
      // Per thread and frame (ms), busiest first: the first is the decoder's own thread.
      const perFrame = (ns: number) => ns / 1e6 / frameMs.length;
      const threads = [...after]
        .map(([tid, t]) => {
          const b = before.get(tid) ?? t;
          return { cpu: perFrame(t.cpu - b.cpu), waitingForCore: perFrame(t.waitingForCore - b.waitingForCore) };
        })
        .filter((t) => t.cpu > 0.05)
        .sort((a, b) => b.cpu - a.cpu);
      const total = threads.reduce((sum, t) => sum + t.cpu, 0);
      // Wall time less the decoder thread's waits for a core, over the run as a whole (the waits
      // are counted from reading to reading, so the wall time must be too): what remains is its
      // own work and its waits for helpers (which include the helpers' own waits for a core).
      const notWaiting = runMs / frameMs.length - (threads[0]?.waitingForCore ?? 0);
      console.log(
        `  ${postProcess ? 'reconstruction + post-processing' : 'reconstruction only'}: wall ${fixed(median(frameMs))} ms/frame median ` +
          `(mean ${fixed(mean(frameMs))}, fastest ${fixed(Math.min(...frameMs))}) → ${fixed(1000 / median(frameMs))} frames/s; ` +
          `worker CPU ${fixed(total)} ms/frame (threads: ${threads.map((t) => fixed(t.cpu)).join(' + ')}); ` +
          `run's wall less the decoder thread's waits for a core ${fixed(notWaiting)} ms/frame → ${fixed(1000 / notWaiting)} frames/s`,
      );
    }
  } finally {
    await browser.close();
    await origin.stop();
  }
}
console.log(`load average at end ${loadavg().map(fixed).join(' ')}`);
