/**
 * Frames per second of the wasm module when N decoders run side by side, as the player's decoder
 * pool runs them (src/decoder/pool.ts: segments decode independently, one per worker). Each
 * decoder is its own process here (the player's are Web Workers: same module, same one-core-each
 * work). All N load the stream and its natively decoded pictures first, then start together on a
 * signal; each hands over every frame's pictures (a copy into wasm memory, as the worker does
 * with decoded `VideoFrame`s) and reconstructs it with post-processing, `repeat` times over the
 * stream. The result is wall time from the start signal to the last decoder's end, so it counts
 * whatever the decoders cost each other (memory bandwidth, shared caches).
 *
 *   node node_modules/tsx/dist/cli.mjs wasm/tools/wasm_pool_bench.ts wasm/build-wasm \
 *     wasm/build-native/vpcc-dump-pictures STREAM.bin [--workers 2] [--repeat 3]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { VpccDecoder } from '../../src/decoder/vpcc';
import { dumpPictures, loadModule, putFramePictures } from '../tests/wasm_support';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args.splice(at, 2)[1]) : fallback;
};
const decoderAt = args.indexOf('--decoder');
const isDecoder = decoderAt >= 0;
if (isDecoder) args.splice(decoderAt, 1);
const workers = option('--workers', 2);
const repeat = option('--repeat', 3);
const [buildDir, dumpTool, stream] = args;
if (!stream) throw new Error('usage: wasm_pool_bench.ts BUILD_DIR DUMP_TOOL STREAM.bin [--workers N] [--repeat R]');

interface DecoderResult { frames: number; points: number; ms: number }

if (isDecoder) await runDecoder();
else await runPool();

/** One decoder: set up, say "ready", wait for "go", decode, print its result as JSON. */
async function runDecoder(): Promise<void> {
  const module = await loadModule(resolve(buildDir));
  const bytes = readFileSync(stream);
  const pictures = dumpPictures(resolve(dumpTool), stream);
  const decoder = new VpccDecoder(module);
  const videoStreams = decoder.load(bytes);
  console.log('ready');
  await new Promise<void>((go) => createInterface({ input: process.stdin }).once('line', () => go()));
  const t0 = performance.now();
  let frames = 0, points = 0;
  for (let r = 0; r < repeat; r++) {
    for (let f = 0; f < decoder.frameCount; f++) {
      putFramePictures(decoder, videoStreams, pictures, f);
      points += decoder.reconstruct(f).count;
      decoder.releaseFrame(f);
      frames++;
    }
  }
  const result: DecoderResult = { frames, points, ms: performance.now() - t0 };
  decoder.destroy();
  console.log(JSON.stringify(result));
  process.exit(0);
}

/** Starts `workers` decoders, releases them together and reports the pool's frames per second. */
async function runPool(): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const children = Array.from({ length: workers }, () =>
    spawn(process.execPath, [...process.execArgv, self, buildDir, dumpTool, stream, '--repeat', String(repeat), '--decoder'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  const lines = children.map((child) => createInterface({ input: child.stdout! }));
  const nextLine = (i: number) =>
    new Promise<string>((resolveLine, reject) => {
      lines[i].once('line', resolveLine);
      children[i].once('exit', (code) => reject(new Error(`decoder ${i} exited (${code}) before answering`)));
    });
  const ready = await Promise.all(children.map((_, i) => nextLine(i)));
  if (ready.some((line) => line !== 'ready')) throw new Error(`a decoder did not get ready: ${ready.join(' | ')}`);
  const results = children.map((_, i) => nextLine(i));
  const t0 = performance.now();
  for (const child of children) child.stdin!.write('go\n');
  const decoded = (await Promise.all(results)).map((line) => JSON.parse(line) as DecoderResult);
  const wallMs = performance.now() - t0;
  const frames = decoded.reduce((sum, d) => sum + d.frames, 0);
  const perDecoder = decoded.map((d) => (d.frames / d.ms * 1000).toFixed(1)).join(', ');
  console.log(
    `${basename(stream)}: ${workers} decoder(s), ${Math.round(decoded[0].points / decoded[0].frames)} points/frame, ` +
      `${frames} frames in ${(wallMs / 1000).toFixed(2)} s wall: ${(frames / wallMs * 1000).toFixed(1)} frames/s together ` +
      `(each: ${perDecoder} frames/s); reconstruction + post-processing + picture hand-over`,
  );
}
