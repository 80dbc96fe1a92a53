/**
 * Bad input to the wasm module gives a VpccError (status + message), never a trap, abort or
 * hang, and leaves the module usable: corrupted and truncated segments, pictures that do not fit
 * the atlas, out-of-range indices, calls in the wrong order. After all that, the module must still
 * decode a good segment to TMC2's checksums.
 *
 * With --threaded, the threaded build (vpcc-mt): errors raised on its helper threads too.
 *
 *   tsx wasm/tests/wasm_robustness.ts BUILD_WASM_DIR VPCC_DUMP_PICTURES SHARED_DIR [--threaded]
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VpccDecoder, VpccError } from '../../src/decoder/vpcc';
import { Checks, dumpPictures, loadModule, putDumpedPicture, putFramePictures, tmc2LogValues } from './wasm_support';

const [buildDir, dumpTool, sharedDir, mode] = process.argv.slice(2);
const checks = new Checks();
const base = join(sharedDir, 'vpcc/synth_ai_r4/synth_ai_r4');
if (!existsSync(`${base}.bin`)) {
  checks.skip(`${base}.bin absent`);
  checks.finish();
}
const module = await loadModule(buildDir, { threaded: mode === '--threaded' });
const decoder = new VpccDecoder(module);
const good = readFileSync(`${base}.bin`);
const pictures = dumpPictures(dumpTool, `${base}.bin`);

/** Runs `fn`; it may succeed, or fail with a VpccError — anything else (a trap) is a failure. */
function clean(what: string, fn: () => void): 'ok' | 'error' {
  try {
    fn();
    return 'ok';
  } catch (e) {
    checks.ok(e instanceof VpccError && e.message.length > 20, `${what}: ${String(e)}`);
    return 'error';
  }
}

// Deterministic pseudo-random corruptions (xorshift) of the segment's bytes, and truncations.
let seed = 0x9e3779b9;
const random = () => ((seed ^= seed << 13), (seed ^= seed >>> 17), (seed ^= seed << 5), (seed >>> 0) / 2 ** 32);
let errors = 0, loaded = 0, reconstructed = 0;
for (let i = 0; i < 300; i++) {
  const bytes = Uint8Array.from(good);
  const flips = 1 + Math.floor(random() * 8);
  // Most damage where the structure is (the first kilobytes: VPS, atlas), some anywhere.
  for (let k = 0; k < flips; k++) bytes[Math.floor(random() * (random() < 0.7 ? 4096 : bytes.length))] ^= 1 + Math.floor(random() * 255);
  const result = clean(`corruption ${i}`, () => decoder.load(bytes));
  if (result === 'error') errors++;
  else {
    loaded++;
    // Whatever parsed must still answer every query cleanly — and the first few reconstruct a
    // frame from the (now mismatching) real pictures, where a damaged atlas meets real data.
    clean(`corruption ${i} patches`, () => decoder.patches(0));
    if (loaded <= 40) {
      const r = clean(`corruption ${i} frame 0`, () => {
        putFramePictures(decoder, decoder.load(bytes), pictures, 0);
        decoder.reconstruct(0, { postProcess: false });
      });
      if (r === 'ok') reconstructed++;
    } else clean(`corruption ${i} frame 0`, () => decoder.reconstruct(0));
  }
}
for (const length of [0, 1, 4, 5, 100, 1000, good.length >> 1, good.length - 1]) {
  if (clean(`truncated to ${length} bytes`, () => decoder.load(good.subarray(0, length))) === 'error') errors++;
}
console.log(`corrupted/truncated segments: ${errors} rejected with an error, ${loaded} still parsed (${reconstructed} of the first 40 reconstructed a frame)`);
checks.ok(errors > 0, 'some corruptions are rejected');

// Pictures that do not fit, indices out of range, wrong call order.
const streams = decoder.load(good);
const first = pictures.find((p) => p.stream === 1 && p.index === 0)!;
const mustFail = (what: string, fn: () => void) => checks.equal(clean(what, fn), 'error', `${what} is rejected`);
mustFail('picture beyond the stream', () => putDumpedPicture(decoder, { ...first, index: 10_000 }));
mustFail('picture of a missing stream', () => putDumpedPicture(decoder, { ...first, stream: 99 }));
mustFail('picture of the wrong size', () => putDumpedPicture(decoder, { ...first, width: first.width / 2, samples: first.samples.subarray(0, first.samples.length / 2) }));
mustFail('occupancy picture not dividing the atlas', () => putDumpedPicture(decoder, { ...first, stream: 0, width: 1000, height: 1000, samples: first.samples.subarray(0, 1_500_000) }));
mustFail('frame beyond the segment', () => decoder.reconstruct(1000));
mustFail('frame without its pictures', () => decoder.reconstruct(0));
mustFail('plane index 3', () => decoder.plane(1, 0, 3));
mustFail('block-to-patch without occupancy', () => decoder.blockToPatch(0));

// Still decodes correctly afterwards.
const want = tmc2LogValues(`${base}_dec_rec_pcframe_log.txt`, 'MD5 checksum');
putFramePictures(decoder, streams, pictures, 0);
decoder.reconstruct(0);
checks.equal(decoder.frameMd5(), want[0], 'frame 0 after all the bad input');
decoder.destroy();
checks.finish();
