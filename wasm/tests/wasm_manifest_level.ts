/**
 * A segment larger than the level its manifest declares is a decode error before any allocation:
 * the wasm module loads a committed stream (320×224 atlas, level 1.0) rewritten to declare a
 * 2048×2048 atlas (level 2.0 holds it, 1.0 does not) with the level the manifest declares set to
 * 1.0, and must refuse it while parsing its VPS with a message naming the manifest's level, its
 * wasm memory and heap unchanged. The same bytes under a manifest of level 2.0 pass that check
 * (and fail later, on the ASPS that still says 320×224), and the original stream loads.
 *
 *   tsx wasm/tests/wasm_manifest_level.ts BUILD_WASM_DIR CONFORMANCE_DIR
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { heapUsed, VpccDecoder, VpccError, wasmMemoryBytes } from '../../src/decoder/vpcc';
import { Checks, loadModule } from './wasm_support';

const [buildDir, conformanceDir] = process.argv.slice(2);
const checks = new Checks();
const original = readFileSync(join(conformanceDir, 'ours_hevc_lod2_inter/ours_hevc_lod2_inter.bin'));

/** Bits of a byte array, read and written most significant first. */
class Bits {
  bits: number[] = [];
  static of(bytes: Uint8Array): Bits {
    const b = new Bits();
    for (const byte of bytes) for (let i = 7; i >= 0; i--) b.bits.push((byte >> i) & 1);
    return b;
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(Math.ceil(this.bits.length / 8));
    this.bits.forEach((bit, i) => (out[i >> 3] |= bit << (7 - (i & 7))));
    return out;
  }
}

/** Reads an unsigned Exp-Golomb code at `at`; gives its value and the position after it. */
function readUe(bits: number[], at: number): { value: number; end: number } {
  let zeros = 0;
  while (bits[at + zeros] === 0) zeros++;
  let value = 0;
  for (let i = 0; i <= zeros; i++) value = value * 2 + bits[at + zeros + i];
  return { value: value - 1, end: at + 2 * zeros + 1 };
}

function ue(value: number): number[] {
  const code = (value + 1).toString(2);
  return [...'0'.repeat(code.length - 1), ...code].map(Number);
}

/**
 * `stream` with its first VPS declaring `width` × `height` at `levelIdc`: the sample stream's
 * header byte, the VPS unit's size field (4 bytes here), the 4-byte unit header, then the VPS:
 * profile_tier_level (ptl_level_idc at bit 56; the rest of it up to the atlas as the stream has
 * it: no sub-profiles, no tool constraints), vps id, reserved, atlas count, atlas id, width, height.
 */
function declaring(stream: Uint8Array, width: number, height: number, levelIdc: number): Uint8Array {
  if (stream[0] >> 5 !== 3) throw new Error('expected 4-byte V3C unit sizes');
  const unitSize = new DataView(stream.buffer, stream.byteOffset + 1, 4).getUint32(0);
  const vps = Bits.of(stream.subarray(9, 5 + unitSize));
  vps.bits.splice(56, 8, ...[...levelIdc.toString(2).padStart(8, '0')].map(Number));
  // ptl: 72 bits with its sub-profile count (6) and two flags (none, no constraints); then vps id
  // (4), reserved (8), atlas count (6) and atlas id (6).
  const widthAt = 72 + 4 + 8 + 6 + 6;
  const w = readUe(vps.bits, widthAt), h = readUe(vps.bits, w.end);
  vps.bits.splice(widthAt, h.end - widthAt, ...ue(width), ...ue(height));
  const payload = vps.bytes();
  const out = new Uint8Array(stream.length - (unitSize - 4) + payload.length);
  out[0] = stream[0];
  new DataView(out.buffer, 1, 4).setUint32(0, payload.length + 4);
  out.set(stream.subarray(5, 9), 5);
  out.set(payload, 9);
  out.set(stream.subarray(5 + unitSize), 9 + payload.length);
  return out;
}

const module = await loadModule(buildDir);
const decoder = new VpccDecoder(module);
checks.ok(decoder.load(original, { manifestLevelIdc: 30 }).length > 0, 'the original stream loads under a manifest of level 1.0');
const larger = declaring(original, 2048, 2048, 60);
const before = { memory: wasmMemoryBytes(module), heap: heapUsed(module) };
try {
  decoder.load(larger, { manifestLevelIdc: 30 });
  checks.ok(false, 'a 2048×2048 atlas under a manifest of level 1.0 was loaded');
} catch (e) {
  checks.ok(e instanceof VpccError && /exceeds MaxAtlasSize 2228224 of level 1\.0, which the manifest declares/.test(e.message), `refused with: ${String(e)}`);
}
checks.equal(decoder.frameCount, 0, 'frames after the refused load');
checks.equal(wasmMemoryBytes(module), before.memory, 'wasm memory after the refused load');
checks.ok(heapUsed(module) <= before.heap + 4096, `heap in use ${heapUsed(module)} B after the refused load, ${before.heap} B before`);
// Under a manifest of level 2.0 the VPS passes; the ASPS, not rewritten, then disagrees with it.
try {
  decoder.load(larger, { manifestLevelIdc: 60 });
  checks.ok(false, 'the rewritten stream loaded although its ASPS says 320×224');
} catch (e) {
  checks.ok(e instanceof VpccError && !/manifest/.test(e.message), `under level 2.0 refused for another reason: ${String(e)}`);
}
// An idc that names no level is the caller's mistake.
try {
  decoder.load(original, { manifestLevelIdc: 33 });
  checks.ok(false, 'level idc 33 accepted');
} catch (e) {
  checks.ok(e instanceof VpccError && /names no V3C level/.test(e.message), `idc 33: ${String(e)}`);
}
checks.ok(decoder.load(original).length > 0, 'the module still loads the original stream');
decoder.destroy();
checks.finish();
