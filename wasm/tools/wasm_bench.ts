/**
 * Per-frame CPU time of the wasm module in Node (docs/benchmarks.md): parse + atlas decoding per
 * segment, reconstruction, and post-processing, on TMC2 streams whose pictures the native build
 * decodes (video decoding is not the module's job). Each stage is timed `repeat` times; the
 * median is printed.
 *
 *   node node_modules/tsx/dist/cli.mjs wasm/tools/wasm_bench.ts wasm/build-wasm \
 *     wasm/build-native/vpcc-dump-pictures STREAM.bin... [--repeat 3] [--threaded]
 *
 * With --threaded the threaded build (vpcc-mt) is measured, in wall time (its helper threads'
 * CPU time is what it spends in parallel); frames/s are printed from the medians.
 */
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { VpccDecoder } from '../../src/decoder/vpcc';
import { dumpPictures, loadModule, putFramePictures } from '../tests/wasm_support';

const args = process.argv.slice(2);
const repeatAt = args.indexOf('--repeat');
const repeat = repeatAt >= 0 ? Number(args.splice(repeatAt, 2)[1]) : 3;
const threadedAt = args.indexOf('--threaded');
const threaded = threadedAt >= 0;
if (threaded) args.splice(threadedAt, 1);
const [buildDir, dumpTool, ...streams] = args;
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
// CPU time of this (single-threaded) process, not wall time: on a machine shared with other jobs
// waiting for a core would otherwise count as work.
// The threaded build's work is spread over threads: its wall time is what counts.
const time = (fn: () => void) => {
  if (threaded) {
    const t0 = performance.now();
    fn();
    return performance.now() - t0;
  }
  const t0 = process.cpuUsage();
  fn();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / 1000;
};

const module = await loadModule(resolve(buildDir), { threaded });
console.log(`${threaded ? 'threaded build (vpcc-mt), wall time' : 'single-threaded build (vpcc), CPU time'}; ${module._vpcc_threads()} thread(s)`);
for (const stream of streams) {
  const bytes = readFileSync(stream);
  const pictures = dumpPictures(resolve(dumpTool), stream);
  const decoder = new VpccDecoder(module);
  const parse: number[] = [], reconstruct: number[] = [], post: number[] = [];
  let points = 0;
  for (let r = 0; r < repeat; r++) {
    let videoStreams = decoder.load(bytes);
    parse.push(time(() => (videoStreams = decoder.load(bytes))));
    for (let f = 0; f < decoder.frameCount; f++) {
      putFramePictures(decoder, videoStreams, pictures, f);
      const plain = time(() => (points = decoder.reconstruct(f, { postProcess: false }).count));
      const full = time(() => decoder.reconstruct(f));
      reconstruct.push(plain);
      post.push(full - plain);
      decoder.releaseFrame(f);
    }
  }
  decoder.destroy();
  console.log(
    `${basename(stream)}: ${points} points/frame; parse + atlas ${median(parse).toFixed(1)} ms/segment, ` +
      `reconstruction ${median(reconstruct).toFixed(1)} ms/frame, post-processing ${median(post).toFixed(1)} ms/frame ` +
      `(${threaded ? 'wall' : 'CPU'} time, medians of ${repeat} runs) → ${(1000 / (median(reconstruct) + median(post))).toFixed(1)} frames/s`,
  );
}
process.exit(0);
