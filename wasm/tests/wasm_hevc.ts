/**
 * The wasm module's own HEVC decoder (libde265, the fallback where WebCodecs has no HEVC) against
 * TMC2 release-v24.0 (../shared/vpcc): the video streams of every TMC2 stream there are decoded
 * inside the module a frame's worth at a time, each frame is reconstructed as soon as its
 * pictures are in, and its MD5 before and after post-processing must equal TMC2's logs — video
 * decoding, reconstruction and post-processing all in WebAssembly. Prints the HEVC decoding rate
 * (a benchmark, never asserted).
 *
 *   tsx wasm/tests/wasm_hevc.ts BUILD_WASM_DIR SHARED_DIR
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VpccDecoder, VpccError } from '../../src/decoder/vpcc';
import { Checks, loadModule, tmc2LogValues } from './wasm_support';

const [buildDir, sharedDir] = process.argv.slice(2);
const checks = new Checks();
const module = await loadModule(buildDir);
const vpccDir = join(sharedDir, 'vpcc');
const names = existsSync(vpccDir) ? readdirSync(vpccDir).filter((n) => existsSync(join(vpccDir, n, `${n}.bin`))) : [];
if (names.length === 0) checks.skip(`no TMC2 streams under ${vpccDir}`);

const probe = new VpccDecoder(module);
checks.ok(probe.canDecode('hevc'), 'this build decodes HEVC in the module');
checks.ok(!probe.canDecode('avc'), 'AVC is left to WebCodecs');
probe.destroy();

for (const name of names) {
  const base = join(vpccDir, name, name);
  const before = tmc2LogValues(`${base}_dec_pcframe_log.txt`, 'MD5 checksum');
  const after = tmc2LogValues(`${base}_dec_rec_pcframe_log.txt`, 'MD5 checksum');
  const decoder = new VpccDecoder(module);
  const streams = decoder.load(readFileSync(`${base}.bin`));
  let pictures = 0, pixels = 0, decodeMs = 0;
  checks.equal(decoder.frameCount, before.length, `${name}: frame count vs TMC2's log`);
  for (let f = 0; f < decoder.frameCount; f++) {
    const t0 = performance.now();
    for (const s of streams) {
      const got = decoder.decodePictures(s.index, s.picturesPerFrame);
      checks.equal(got, s.picturesPerFrame, `${name} frame ${f}: ${s.component} pictures decoded`);
      pictures += got;
      pixels += got * decoder.plane(s.index, (f - s.firstFrame) * s.picturesPerFrame, 0).width * decoder.plane(s.index, (f - s.firstFrame) * s.picturesPerFrame, 0).height;
    }
    decodeMs += performance.now() - t0;
    checks.ok(decoder.frameReady(f), `${name} frame ${f}: ready after decoding its pictures`);
    decoder.reconstruct(f, { postProcess: false });
    checks.equal(decoder.frameMd5(), before[f], `${name} frame ${f} md5 before post-processing`);
    decoder.reconstruct(f);
    checks.equal(decoder.frameMd5(), after[f], `${name} frame ${f} md5 after post-processing`);
    decoder.releaseFrame(f);
  }
  for (const s of streams) checks.equal(decoder.decodePictures(s.index, 1), 0, `${name}: ${s.component} stream done`);
  // A stream index past the end is an argument error with a message.
  try {
    decoder.decodePictures(streams.length, 1);
    checks.ok(false, `${name}: decoding a stream that does not exist throws`);
  } catch (e) {
    checks.ok(e instanceof VpccError && /no such video stream/.test(e.message), `${name}: missing stream error (${String(e)})`);
  }
  decoder.destroy();
  console.log(`${name}: ${pictures} HEVC pictures decoded in wasm in ${decodeMs.toFixed(0)} ms ` +
    `(${((pictures * 1000) / decodeMs).toFixed(1)} pictures/s, ${((pixels / 1e6) * 1000 / decodeMs).toFixed(1)} Mpixel/s)`);
}
// Damaged video: bytes flipped inside the coded pictures give an error or pictures, never a
// trap, and the module keeps decoding afterwards (libde265 sees every byte of the video).
if (names.length > 0) {
  const clean = readFileSync(join(vpccDir, names[0], `${names[0]}.bin`));
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  let errors = 0;
  for (let trial = 0; trial < 12; trial++) {
    const bytes = new Uint8Array(clean); // a copy (Buffer.slice would share the bytes)
    for (let k = 0; k < 8; k++) bytes[Math.floor(bytes.length * (0.2 + 0.8 * random()))] ^= 1 + Math.floor(random() * 255);
    const decoder = new VpccDecoder(module);
    try {
      const streams = decoder.load(bytes);
      for (let f = 0; f < decoder.frameCount; f++) {
        for (const s of streams) decoder.decodePictures(s.index, s.picturesPerFrame);
        if (decoder.frameReady(f)) decoder.reconstruct(f);
        decoder.releaseFrame(f);
      }
    } catch (e) {
      checks.ok(e instanceof VpccError, `damaged video (trial ${trial}): an error with a message, not ${String(e)}`);
      errors++;
    } finally {
      decoder.destroy();
    }
  }
  console.log(`damaged video: ${errors} of 12 trials ended in a VpccError, the rest decoded`);
  const after = new VpccDecoder(module);
  const streams = after.load(clean);
  for (const s of streams) after.decodePictures(s.index, s.picturesPerFrame);
  checks.ok(after.frameReady(0), 'the module still decodes after damaged video');
  after.destroy();
}
checks.finish();
