/**
 * Decode-worker memory under rung switching, without a browser: one wasm core module decodes the
 * segments of a packed scene (every object, every rung) in a seeded random order — each object's
 * rung walking up and down as the ABR moves it — through the player's own `decodeSegment`, with
 * the video streams' pictures (decoded natively by vpcc-dump-pictures) pushed in a seeded race,
 * as WebCodecs pushes them: one stream's decoder may run many frames ahead of another's. Per
 * segment it records the wasm memory, the allocator's bytes in use and its peak footprint.
 *
 * The checks: after the warm-up (every distinct segment decoded once, in the race's first draws),
 * neither wasm memory nor the allocator's peak footprint grows. The peak is the stricter one:
 * memory grows in Emscripten's 20 % steps, so a peak creeping up a little per hundred segments
 * (the free holes left between blocks differing from frame to frame) shows only after many, as
 * one late step. With `--frames-in-wasm N` (N = 1000: every picture put in as it comes; 2: the
 * frame after the next too, as before) it shows what pictures held ahead cost.
 *
 *   tsx wasm/tests/wasm_memory_switching.ts BUILD_WASM_DIR VPCC_DUMP_PICTURES CONTENT_DIR SEGMENTS [--seed S] [--frames-in-wasm N] [--log]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { decodeSegment, type VideoDecoders } from '../../src/decoder/segment';
import type { DecodedPicture } from '../../src/decoder/picture';
import { heapPeak, heapUsed, VpccDecoder, wasmMemoryBytes, type VideoStream } from '../../src/decoder/vpcc';
import { parseManifest, segmentPath } from '../../src/player/mpd';
import { seeded } from '../../src/testing/seeded';
import { Checks, loadModule } from './wasm_support';

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args.splice(at, 2)[1];
};
const log = args.includes('--log') ? (args.splice(args.indexOf('--log'), 1), true) : false;
const seed = Number(option('--seed') ?? 36);
const framesInWasm = option('--frames-in-wasm');
const [buildDir, dumpTool, contentDir, segmentsArg] = args;
const segmentCount = Number(segmentsArg ?? 200);
const checks = new Checks();

/** One distinct segment file: its bytes and where its natively decoded pictures are. */
interface Segment {
  name: string;
  bytes: Uint8Array;
  pictureDir: string;
  /** pictures.txt: stream index width height bitDepth chroma444 file, per picture. */
  list: string[][];
}

const manifestPath = join(contentDir, 'manifest.mpd');
const scene = parseManifest(readFileSync(manifestPath, 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'vpcc-switching-'));

/** Every file of every object and rung, its pictures dumped once (read back per decode). */
function dumpAll(): Segment[][][] {
  return scene.objects.map((object, o) =>
    object.representations.map((rep, q) =>
      Array.from({ length: object.loopSegments }, (_, k) => {
        const path = join(dirname(manifestPath), segmentPath(object, rep.id, k));
        const pictureDir = join(work, `${o}-${q}-${k}`);
        mkdirSync(pictureDir);
        const run = spawnSync(dumpTool, [path, pictureDir], { encoding: 'utf8' });
        if (run.status !== 0) throw new Error(`${dumpTool} ${path}: ${run.stderr}`);
        const list = readFileSync(join(pictureDir, 'pictures.txt'), 'utf8').trim().split('\n').map((l) => l.split(' '));
        return { name: `${object.id}/${rep.id}/${k}`, bytes: readFileSync(path), pictureDir, list };
      }),
    ),
  );
}

/** A natively decoded picture as the decoder's push path gets one (planar, one allocation). */
function pictureOf(segment: Segment, line: string[]): DecodedPicture {
  const [, , w, h, depth, c444, file] = line;
  const width = +w, height = +h, bitDepth = +depth, chroma444 = c444 === '1';
  const bytesPerSample = bitDepth > 8 ? 2 : 1;
  const chromaWidth = chroma444 ? width : Math.ceil(width / 2), chromaHeight = chroma444 ? height : Math.ceil(height / 2);
  const samples = readFileSync(join(segment.pictureDir, file));
  const luma = width * height * bytesPerSample, chroma = chromaWidth * chromaHeight * bytesPerSample;
  return {
    width, height, codedWidth: width, codedHeight: height, bytesPerSample, bitDepth, chroma444, chromaInterleaved: false,
    byteLength: samples.length,
    copyTo: async (target) => {
      target.set(samples);
      return [{ offset: 0, stride: width }, { offset: luma, stride: chromaWidth }, { offset: luma + chroma, stride: chromaWidth }];
    },
    close: () => {},
  };
}

/**
 * The streams' pictures pushed in a race: each stream decodes at a pace of its own for this
 * segment (drawn from `random`), so one may finish while another has given a few pictures. The
 * order is all that matters here: the decoder copies pictures in the order they arrive.
 */
function racingDecoders(segment: Segment, random: () => number): VideoDecoders {
  const registered: { stream: VideoStream; onPicture: (p: DecodedPicture) => void; done: () => void }[] = [];
  return {
    push: (stream, onPicture) =>
      new Promise<void>((done) => {
        registered.push({ stream, onPicture, done });
        if (registered.length > 1) return;
        setImmediate(() => {
          const arrivals: { at: number; r: (typeof registered)[number]; line: string[] }[] = [];
          for (const r of registered) {
            const period = 1 + 8 * random() ** 2;
            const lines = segment.list.filter((l) => +l[0] === r.stream.index).sort((a, b) => +a[1] - +b[1]);
            lines.forEach((line, i) => arrivals.push({ at: (i + random()) * period, r, line }));
          }
          arrivals.sort((a, b) => a.at - b.at);
          for (const a of arrivals) a.r.onPicture(pictureOf(segment, a.line));
          for (const r of registered) r.done();
        });
      }),
  };
}

try {
  const segments = dumpAll();
  const module = await loadModule(buildDir);
  const decoder = new VpccDecoder(module);
  const random = seeded(seed);
  const rungs = scene.objects.map(() => 0);
  const distinct = new Set<string>();
  let warmAt: number | undefined;
  let warmMemory = 0;
  let warmPeak = 0;
  const t0 = performance.now();
  const sweep = segments.flat(2);
  for (let step = 0; step < segmentCount; step++) {
    // First every distinct segment once (the warm-up), then objects in turn, each one's rung
    // walking as the ABR moves it (up, down or stays).
    let segment = sweep[step];
    if (!segment) {
      const o = step % scene.objects.length;
      const top = scene.objects[o].representations.length - 1;
      rungs[o] = Math.max(0, Math.min(top, rungs[o] + Math.floor(random() * 3) - 1));
      const files = segments[o][rungs[o]];
      segment = files[Math.floor(step / scene.objects.length) % files.length];
    }
    const result = await decodeSegment(decoder, segment.bytes, { framesInWasm: framesInWasm === undefined ? undefined : Number(framesInWasm) }, racingDecoders(segment, random));
    checks.equal(result.frames.length > 0, true, `${segment.name}: frames decoded`);
    distinct.add(segment.name);
    const memory = wasmMemoryBytes(module);
    const peak = heapPeak(module);
    if (warmAt === undefined && distinct.size === sweep.length) {
      warmAt = step;
      warmMemory = memory;
      warmPeak = peak;
    }
    if (log) console.log(`${step} ${segment.name} memory ${(memory / 2 ** 20).toFixed(1)} MB, in use ${(heapUsed(module) / 2 ** 20).toFixed(1)} MB, peak ${(heapPeak(module) / 2 ** 20).toFixed(1)} MB`);
    if (warmAt !== undefined && memory > warmMemory) {
      checks.ok(false, `segment ${step} (${segment.name}): wasm memory grew after the warm-up (segment ${warmAt}) from ${warmMemory} to ${memory} B`);
      warmMemory = memory;
    }
    if (warmAt !== undefined && peak > warmPeak) {
      checks.ok(false, `segment ${step} (${segment.name}): the allocator's peak footprint grew after the warm-up (segment ${warmAt}) from ${warmPeak} to ${peak} B`);
      warmPeak = peak;
    }
  }
  const s = (performance.now() - t0) / 1000;
  checks.ok(warmAt !== undefined, `every distinct segment decoded within ${segmentCount} segments`);
  console.log(
    `${segmentCount} segments (seed ${seed}, frames in wasm ${framesInWasm ?? 'default'}) in ${s.toFixed(1)} s; warm after segment ${warmAt}: ` +
      `wasm memory ${wasmMemoryBytes(module)} B, heap in use ${heapUsed(module)} B, peak footprint ${heapPeak(module)} B`,
  );
  decoder.destroy();
} finally {
  rmSync(work, { recursive: true, force: true });
}
checks.finish();
