/**
 * Per-frame CPU time of the wasm module in Node (docs/benchmarks.md): parse + atlas decoding per
 * segment, reconstruction, and post-processing, on TMC2 streams whose pictures the native build
 * decodes (video decoding is not the module's job). Each stage is timed `repeat` times; the
 * median is printed.
 *
 *   node node_modules/tsx/dist/cli.mjs wasm/tools/wasm_bench.ts wasm/build-wasm \
 *     wasm/build-native/vpcc-dump-pictures STREAM.bin... [--repeat 3] [--threaded]
 *
 * With --threaded the threaded build (vpcc-mt) is measured. Frames/s are from the median wall
 * time of reconstruction + post-processing: measure on a quiet machine.
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
// Wall time and CPU time (of the whole process: every thread) of one call. On a machine shared
// with other jobs wall time includes waiting for a core; CPU time does not, but for the threaded
// build it adds up the threads' work instead of showing how long a frame took.
const wall: number[][] = [[], [], []];
const time = (fn: () => void, into: number) => {
  const t0 = process.cpuUsage(), w0 = performance.now();
  fn();
  const t = process.cpuUsage(t0);
  wall[into].push(performance.now() - w0);
  return (t.user + t.system) / 1000;
};

const module = await loadModule(resolve(buildDir), { threaded });
console.log(`${threaded ? 'threaded build (vpcc-mt)' : 'single-threaded build (vpcc)'}: ${module._vpcc_threads()} thread(s)`);
for (const stream of streams) {
  const bytes = readFileSync(stream);
  const pictures = dumpPictures(resolve(dumpTool), stream);
  const decoder = new VpccDecoder(module);
  const parse: number[] = [], reconstruct: number[] = [], post: number[] = [];
  let points = 0;
  for (let r = 0; r < repeat; r++) {
    let videoStreams = decoder.load(bytes);
    parse.push(time(() => (videoStreams = decoder.load(bytes)), 0));
    for (let f = 0; f < decoder.frameCount; f++) {
      putFramePictures(decoder, videoStreams, pictures, f);
      const plain = time(() => (points = decoder.reconstruct(f, { postProcess: false }).count), 1);
      const full = time(() => decoder.reconstruct(f), 2);
      reconstruct.push(plain);
      post.push(full - plain);
      decoder.releaseFrame(f);
    }
  }
  decoder.destroy();
  const frameWall = median(wall[2]);
  console.log(
    `${basename(stream)}: ${points} points/frame; CPU time (all threads): parse + atlas ${median(parse).toFixed(1)} ms/segment, ` +
      `reconstruction ${median(reconstruct).toFixed(1)} ms/frame, post-processing ${median(post).toFixed(1)} ms/frame; ` +
      `wall time: reconstruction ${median(wall[1]).toFixed(1)} ms/frame, reconstruction + post-processing ${frameWall.toFixed(1)} ms/frame ` +
      `→ ${(1000 / frameWall).toFixed(1)} frames/s (medians of ${repeat} runs; fastest frame ${Math.min(...wall[2]).toFixed(1)} ms)`,
  );
  wall.forEach((w) => (w.length = 0));
}
process.exit(0);
