/**
 * Memory stays flat: the wasm module decodes the same segment over and over (pictures in,
 * frames reconstructed and post-processed, pictures released, next segment loaded) and neither
 * the bytes in use by malloc (beyond a few bytes of allocator jitter) nor the wasm memory size may
 * grow once the first pass has warmed the allocator up. Uses the smallest TMC2 stream in ../shared/vpcc (or the one given).
 *
 *   tsx wasm/tests/wasm_memory.ts BUILD_WASM_DIR VPCC_DUMP_PICTURES SHARED_DIR [FRAMES] [STREAM.bin]
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { heapUsed, VpccDecoder } from '../../src/decoder/vpcc';
import { Checks, dumpPictures, loadModule, putFramePictures } from './wasm_support';

const [buildDir, dumpTool, sharedDir, framesArg, streamArg] = process.argv.slice(2);
// Whole segments only (at least this many frames), so every pass ends in the same state.
const totalFrames = Number(framesArg ?? 48);
const checks = new Checks();
/**
 * The allocator may hold a few bytes more or less from one pass to the next (free-list
 * bookkeeping after the same sequence of allocations); a leak grows with every pass and soon
 * exceeds this — at 10 000 frames even 16 bytes per segment load would.
 */
const ALLOCATOR_SLACK = 4096;

function smallestStream(): string | undefined {
  const dir = join(sharedDir, 'vpcc');
  if (!existsSync(dir)) return undefined;
  const streams = readdirSync(dir).map((n) => join(dir, n, `${n}.bin`)).filter((p) => existsSync(p));
  return streams.sort((a, b) => statSync(a).size - statSync(b).size)[0];
}

const stream = streamArg ?? smallestStream();
if (!stream) {
  checks.skip('no stream to decode');
  checks.finish();
} else {
  const bytes = readFileSync(stream);
  const pictures = dumpPictures(dumpTool, stream);
  const module = await loadModule(buildDir);
  const decoder = new VpccDecoder(module);
  let decoded = 0, pass = 0;
  let warm: { heap: number; memory: number } | undefined;
  const t0 = performance.now();
  while (decoded < totalFrames) {
    const streams = decoder.load(bytes);
    for (let f = 0; f < decoder.frameCount; f++, decoded++) {
      putFramePictures(decoder, streams, pictures, f);
      decoder.reconstruct(f);
      decoder.releaseFrame(f);
    }
    pass++;
    const now = { heap: heapUsed(module), memory: module.HEAPU8.buffer.byteLength };
    if (pass === 1) {
      warm = now;  // allocator warmed up by one full segment
      continue;
    }
    checks.ok(now.heap <= warm!.heap + ALLOCATOR_SLACK, `pass ${pass}: heap in use ${now.heap} B, after warm-up ${warm!.heap} B`);
    checks.equal(now.memory, warm!.memory, `pass ${pass}: wasm memory size`);
  }
  const s = (performance.now() - t0) / 1000;
  console.log(
    `${decoded} frames (${pass} segment loads) of ${stream} in ${s.toFixed(1)} s; heap in use after warm-up ` +
      `${warm!.heap} B, now ${heapUsed(module)} B; wasm memory ${module.HEAPU8.buffer.byteLength} B`,
  );
  decoder.destroy();
  checks.finish();
}
