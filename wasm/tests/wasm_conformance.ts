/**
 * Conformance of the WebAssembly build against TMC2 release-v24.0 (../shared/vpcc): for every
 * TMC2 stream there, the pictures decoded natively (vpcc-dump-pictures; the wasm module decodes
 * no video) are fed to the wasm module, and every frame's MD5 before and after post-processing
 * must equal TMC2's logs; the atlas views for a GPU path are checked too. Every folder NAME/ with
 * NAME.bin and TMC2's logs under ../shared/vpcc/ or wasm/tests/conformance/ (TMC2 streams of our
 * own content) is a case.
 * Prints per-frame reconstruction and post-processing times (benchmarks, never asserted).
 *
 * With --threaded the threaded build (vpcc-mt) runs the same checks with its helper threads.
 *
 *   tsx wasm/tests/wasm_conformance.ts BUILD_WASM_DIR VPCC_DUMP_PICTURES SHARED_DIR [--threaded]
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type VideoStream, VpccDecoder, VpccError } from '../../src/decoder/vpcc';
import { Checks, type DumpedPicture, dumpPictures, loadModule, putFramePictures, tmc2LogValues } from './wasm_support';

const [buildDir, dumpTool, sharedDir, mode] = process.argv.slice(2);
const threaded = mode === '--threaded';
const checks = new Checks();
const module = await loadModule(buildDir, { threaded });
// The threaded build must really decode on more than one thread (the machine has 2+ cores).
if (threaded) checks.ok(module._vpcc_threads() > 1, `threaded build runs ${module._vpcc_threads()} thread(s)`);
else checks.equal(module._vpcc_threads(), 1, 'single-threaded build: threads');
const roots = [join(sharedDir, 'vpcc'), join(dirname(fileURLToPath(import.meta.url)), 'conformance')];
const cases = roots
  .filter((root) => existsSync(root))
  .flatMap((root) => readdirSync(root).filter((n) => existsSync(join(root, n, `${n}.bin`))).map((name) => ({ name, base: join(root, name, name) })))
  .sort((a, b) => a.name.localeCompare(b.name));
if (cases.length === 0) checks.skip(`no TMC2 streams under ${roots.join(' or ')}`);

/**
 * What a GPU reconstruction path reads: as many patches as TMC2 decoded, a block-to-patch map
 * that names only those patches and covers some blocks, and stored planes equal to the pictures
 * given (8-bit components, so conversion is the identity).
 */
function checkGpuViews(decoder: VpccDecoder, streams: VideoStream[], pictures: DumpedPicture[], f: number, patchCount: number, what: string): void {
  checks.equal(decoder.patches(f).length / 20, patchCount, `${what}: patches vs TMC2's atlas log`);
  const b2p = decoder.blockToPatch(f);
  checks.ok(b2p.map.some((v) => v > 0) && b2p.map.every((v) => v <= patchCount), `${what}: block-to-patch names the frame's patches`);
  for (const s of streams) {
    const index = (f - s.firstFrame) * s.picturesPerFrame;
    const given = pictures.find((p) => p.stream === s.index && p.index === index)!;
    if (given.bitDepth > 8) continue;
    const luma = decoder.plane(s.index, index, 0);
    checks.ok(luma.width === given.width && luma.samples.every((v, i) => v === given.samples[i]), `${what}: stored ${s.component} plane equals the picture given`);
  }
}

for (const { name, base } of cases) {
  const before = tmc2LogValues(`${base}_dec_pcframe_log.txt`, 'MD5 checksum');
  const after = tmc2LogValues(`${base}_dec_rec_pcframe_log.txt`, 'MD5 checksum');
  const patchCounts = tmc2LogValues(`${base}_dec_atlas_log.txt`, 'AtlasTotalNumProjPatches');
  const pictures = dumpPictures(dumpTool, `${base}.bin`);
  const decoder = new VpccDecoder(module);
  const t0 = performance.now();
  const streams = decoder.load(readFileSync(`${base}.bin`));
  const parseMs = performance.now() - t0;
  checks.equal(decoder.frameCount, before.length, `${name}: frame count vs TMC2's log`);
  checks.equal(decoder.frameCount, after.length, `${name}: frame count vs TMC2's post-processed log`);
  let reconstructMs = 0, postMs = 0;
  for (let f = 0; f < decoder.frameCount; f++) {
    // Odd frames arrive as NV12 (interleaved chroma, what hardware decoders output): same result.
    putFramePictures(decoder, streams, pictures, f, { nv12: f % 2 === 1 });
    checks.ok(decoder.frameReady(f), `${name} frame ${f}: ready once its pictures are in`);
    checkGpuViews(decoder, streams, pictures, f, Number(patchCounts[f]), `${name} frame ${f}`);
    const r0 = performance.now();
    const plain = decoder.reconstruct(f, { postProcess: false });
    const r1 = performance.now();
    checks.equal(decoder.frameMd5(), before[f], `${name} frame ${f} md5 before post-processing`);
    const points = plain.count;
    const r2 = performance.now();
    const processed = decoder.reconstruct(f);
    const r3 = performance.now();
    checks.equal(processed.count, points, `${name} frame ${f}: post-processing keeps the point count`);
    checks.equal(decoder.frameMd5(), after[f], `${name} frame ${f} md5 after post-processing`);
    reconstructMs += r1 - r0;
    postMs += r3 - r2 - (r1 - r0);
    decoder.releaseFrame(f);
    checks.ok(!decoder.frameReady(f), `${name} frame ${f}: released`);
  }
  // Asking for a released frame is an error with a message, not a crash.
  try {
    decoder.reconstruct(0);
    checks.ok(false, `${name}: reconstructing a released frame throws`);
  } catch (e) {
    checks.ok(e instanceof VpccError && /missing/.test(e.message), `${name}: released frame error says pictures are missing (${String(e)})`);
  }
  decoder.destroy();
  const n = before.length || 1;
  console.log(
    `${name}: ${before.length} frames; wasm parse + atlas ${parseMs.toFixed(1)} ms/segment, ` +
      `reconstruction ${(reconstructMs / n).toFixed(1)} ms/frame, post-processing ${(postMs / n).toFixed(1)} ms/frame`,
  );
}
checks.finish();
