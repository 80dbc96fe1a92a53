/**
 * The optional HEVC module (libde265, for browsers whose WebCodecs has no HEVC) with the core
 * module, against TMC2 release-v24.0 (../shared/vpcc): every TMC2 stream there goes through the
 * worker's own segment decoder (`decodeSegment`; Node has no WebCodecs, so the HEVC module is
 * its video decoder), and every frame's MD5 before and after post-processing must equal TMC2's
 * logs — video decoding, reconstruction and post-processing all in WebAssembly. Also: the core
 * module carries no libde265 (its exports and bytes), damaged video gives errors, never traps.
 * Prints the HEVC decoding rate (a benchmark, never asserted).
 *
 *   tsx wasm/tests/wasm_hevc.ts BUILD_WASM_DIR SHARED_DIR
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeSegment, type VideoDecoders } from '../../src/decoder/segment';
import { VpccDecoder, VpccError } from '../../src/decoder/vpcc';
import { Checks, loadHevc, loadModule, tmc2LogValues } from './wasm_support';

const [buildDir, sharedDir] = process.argv.slice(2);
const checks = new Checks();
const module = await loadModule(buildDir);
const hevc = await loadHevc(buildDir);
let hevcLoads = 0;
const decoders: VideoDecoders = { hevc: async () => (hevcLoads++, hevc) };

// The core is MIT only: no libde265 function or message in it; the HEVC module has them.
const de265Marker = 'de265';
checks.ok(!readFileSync(join(buildDir, 'vpcc.wasm')).includes(de265Marker), 'the core module vpcc.wasm contains no libde265');
checks.ok(readFileSync(join(buildDir, 'vpcc-hevc.wasm')).includes(de265Marker), 'the HEVC module vpcc-hevc.wasm is libde265');
checks.ok(!Object.keys(module).some((name) => name.includes('decode_pictures') || name.includes('hevc')), 'the core exports no video decoding');

const vpccDir = join(sharedDir, 'vpcc');
const names = existsSync(vpccDir) ? readdirSync(vpccDir).filter((n) => existsSync(join(vpccDir, n, `${n}.bin`))) : [];
if (names.length === 0) checks.skip(`no TMC2 streams under ${vpccDir}`);

const decoder = new VpccDecoder(module);
for (const name of names) {
  const base = join(vpccDir, name, name);
  const bytes = readFileSync(`${base}.bin`);
  const want = { before: tmc2LogValues(`${base}_dec_pcframe_log.txt`, 'MD5 checksum'), after: tmc2LogValues(`${base}_dec_rec_pcframe_log.txt`, 'MD5 checksum') };
  for (const postProcess of [false, true]) {
    const stage = postProcess ? 'after' : 'before';
    const result = await decodeSegment(decoder, bytes, { md5: true, postProcess }, decoders);
    checks.equal(result.timing.videoDecoder, 'hevc-module', `${name}: video decoded by the HEVC module`);
    checks.equal(result.md5?.length, want[stage].length, `${name}: frames vs TMC2's log`);
    want[stage].forEach((md5, f) => checks.equal(result.md5?.[f], md5, `${name} frame ${f} md5 ${stage} post-processing`));
    if (postProcess) {
      const pictures = result.frames.length;
      console.log(`${name}: ${pictures} frames' HEVC pictures decoded by the HEVC module and put into the core in ` +
        `${result.timing.pictureMs.toFixed(0)} ms (${((pictures * 1000) / result.timing.pictureMs).toFixed(1)} frames/s)`);
    }
  }
}
if (names.length > 0) checks.ok(hevcLoads > 0, 'the HEVC module was asked for');

// Bad input to the HEVC module: an error with a message, and the module keeps working.
try {
  const stream = hevc.open(new Uint8Array([0, 0, 0, 9, 1, 2, 3]));
  stream.next();
  checks.ok(false, 'a NAL unit length past the end throws');
} catch (e) {
  checks.ok(e instanceof VpccError && /past the end|length/i.test(e.message), `bad framing: a VpccError (${String(e)})`);
}

// Damaged video: bytes flipped inside the coded pictures give an error or frames, never a trap,
// and both modules keep decoding afterwards (libde265 sees every byte of the video).
if (names.length > 0) {
  const clean = readFileSync(join(vpccDir, names[0], `${names[0]}.bin`));
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  let errors = 0;
  for (let trial = 0; trial < 12; trial++) {
    const bytes = new Uint8Array(clean); // a copy (Buffer.slice would share the bytes)
    for (let k = 0; k < 8; k++) bytes[Math.floor(bytes.length * (0.2 + 0.8 * random()))] ^= 1 + Math.floor(random() * 255);
    try {
      await decodeSegment(decoder, bytes, {}, decoders);
    } catch (e) {
      // A stream that ends early is reported by the segment decoder (how many pictures it gave).
      const named = e instanceof VpccError || /gave \d+ pictures|frames could be reconstructed/.test(String(e));
      checks.ok(named && !(e instanceof WebAssembly.RuntimeError), `damaged video (trial ${trial}): an error with a message, not ${String(e)}`);
      errors++;
    }
  }
  console.log(`damaged video: ${errors} of 12 trials ended in an error, the rest decoded`);
  const again = await decodeSegment(decoder, clean, { md5: true }, decoders);
  const first = tmc2LogValues(join(vpccDir, names[0], `${names[0]}_dec_rec_pcframe_log.txt`), 'MD5 checksum');
  checks.equal(again.md5?.[0], first[0], 'the modules still decode bit-exactly after damaged video');
}
decoder.destroy();
checks.finish();
